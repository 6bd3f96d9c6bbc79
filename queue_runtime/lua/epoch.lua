-- epoch: the identity of this Redis dataset, to detect a FLUSHALL or a restart.
--
-- KEYS[1]  {prefix}:epoch
-- ARGV[1]  a fresh random value, stored only when the key is missing
--
-- Returns the current epoch. A reaper that sees it change (or sees its own
-- fresh value come back) knows leases may have vanished and waits before rescuing.
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])

-- epoch: the identity of this Redis dataset, to detect a FLUSHALL or a restart.
--
-- KEYS[1]  {prefix}:epoch   value "<random>:<creation time, ms, server clock>"
-- ARGV[1]  a fresh random value, stored (with the time) only when the key is missing
--
-- Returns the current epoch. A reaper that sees it change (or sees its own
-- fresh value come back) knows leases may have vanished and waits before
-- rescuing; tenant_acquire reads its age for the same reason.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. now, 'NX')
return redis.call('GET', KEYS[1])

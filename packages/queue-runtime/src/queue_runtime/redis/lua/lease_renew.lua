-- lease_renew: the heartbeat of one worker, for all of its leases at once.
--
-- KEYS[i]  {prefix}:lease:{job_id}:{attempt}   one per running token
-- ARGV[1]  worker id (the lease value)
-- ARGV[2]  lease ttl in milliseconds
--
-- Returns a list, one entry per key:
--   1  renewed: the key held our worker id; its ttl is reset
--   2  re-asserted: the key was missing (Redis flushed or restarted), so it is
--      set again to our worker id; the reaper's epoch wait makes this safe
--   0  lost: another worker holds this token (it must not be touched)
local result = {}
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    result[i] = 1
  elseif not holder then
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
    result[i] = 2
  else
    result[i] = 0
  end
end
return result

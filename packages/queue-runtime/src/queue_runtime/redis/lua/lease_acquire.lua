-- lease_acquire: take the leases of freshly claimed jobs, one call per batch.
--
-- KEYS[i]  {prefix}:lease:{job_id}:{attempt}   one per claimed token
-- ARGV[1]  worker id (the lease value)
-- ARGV[2]  lease ttl in milliseconds
--
-- Returns a list, one entry per key: 1 when the caller holds the lease now
-- (newly set, or already its own and refreshed), 0 when another worker holds it.
local result = {}
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'NX', 'PX', ARGV[2]) then
    result[i] = 1
  elseif redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    result[i] = 1
  else
    result[i] = 0
  end
end
return result

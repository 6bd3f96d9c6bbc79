-- lease_release: drop the leases of finished jobs, only where we still hold them.
--
-- KEYS[i]  {prefix}:lease:{job_id}:{attempt}
-- ARGV[1]  worker id; a key holding another value is left alone
--
-- Returns the number of keys deleted.
local deleted = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    deleted = deleted + redis.call('DEL', key)
  end
end
return deleted

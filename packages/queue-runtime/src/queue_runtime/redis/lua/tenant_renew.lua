-- tenant_renew: extend the tenant tokens of a worker's running jobs, in one call.
--
-- KEYS[i]  {prefix}:tenant:{tenant}   ZSET of the i-th job's tenant
-- ARGV[1]  token ttl in milliseconds
-- ARGV[i+1] job id of the i-th job
--
-- A missing member (Redis flushed or restarted) is re-added: the job IS running,
-- so counting it keeps new acquisitions under the cap. Returns the number re-added.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local readded = 0
for i, key in ipairs(KEYS) do
  readded = readded + redis.call('ZADD', key, now + ttl, ARGV[i + 1])
  if redis.call('PTTL', key) < ttl then
    redis.call('PEXPIRE', key, ttl)
  end
end
return readded

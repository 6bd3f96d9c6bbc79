-- tenant_acquire: take one of a tenant's concurrency tokens for a job.
--
-- KEYS[1]  {prefix}:tenant:{tenant}   ZSET, member = job id, score = expiry (ms, server clock)
-- KEYS[2]  {prefix}:epoch             "<random>:<creation ms>" (see epoch.lua)
-- ARGV[1]  job id
-- ARGV[2]  cap: how many jobs of this tenant may run at once
-- ARGV[3]  token ttl in milliseconds (renewed by the heartbeat)
-- ARGV[4]  settle time in ms: a dataset younger than this (just flushed or
--          restarted) may be missing the tokens of RUNNING jobs, which their
--          heartbeats have not re-added yet, so no new token is handed out
-- ARGV[5]  a fresh random value, to create the epoch when it is missing
-- ARGV[6]  "cluster" on a Redis Cluster: an epoch made by another node is replaced
--          (a failover: see epoch.lua), so the promoted node settles too
--
-- Expired members (their worker died) are dropped first. Returns 1 when the
-- job holds a token (newly, or it already had one: refreshed), 0 when the cap
-- is reached, -1 when the dataset is still settling.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local born
if ARGV[6] == 'cluster' then
  local node = redis.call('CLUSTER', 'MYID')
  local current = redis.call('GET', KEYS[2])
  if not current or string.sub(current, -#node - 1) ~= ':' .. node then
    current = ARGV[5] .. ':' .. now .. ':' .. node
    redis.call('SET', KEYS[2], current)
  end
  born = tonumber(string.match(current, '^[^:]*:(%d+):')) or 0
else
  redis.call('SET', KEYS[2], ARGV[5] .. ':' .. now, 'NX')
  born = tonumber(string.match(redis.call('GET', KEYS[2]), ':(%d+)$')) or 0
end
if now - born < tonumber(ARGV[4]) then
  return -1
end
local expiry = now + tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], expiry, ARGV[1])
elseif redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], expiry, ARGV[1])
else
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1

-- epoch: the identity of this Redis dataset, to detect a FLUSHALL, a restart or a failover.
--
-- KEYS[1]  {prefix}:epoch   value "<random>:<creation time, ms, server clock>"
--                           (on a cluster: "<random>:<creation ms>:<node id>")
-- ARGV[1]  a fresh random value, stored (with the time) only when the key is missing
-- ARGV[2]  "cluster" on a Redis Cluster: the epoch also names the node that made it,
--          and a node that finds another node's epoch (its replica was promoted, or
--          the slot moved) makes a new one: writes the old master had acknowledged may
--          never have reached this node, exactly as after a restart
--
-- Returns the current epoch. A reaper that sees it change (or sees its own
-- fresh value come back) knows leases may have vanished and waits before
-- rescuing; tenant_acquire reads its age for the same reason.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[2] == 'cluster' then
  local node = redis.call('CLUSTER', 'MYID')
  local current = redis.call('GET', KEYS[1])
  if not current or string.sub(current, -#node - 1) ~= ':' .. node then
    redis.call('SET', KEYS[1], ARGV[1] .. ':' .. now .. ':' .. node)
  end
  return redis.call('GET', KEYS[1])
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. now, 'NX')
return redis.call('GET', KEYS[1])

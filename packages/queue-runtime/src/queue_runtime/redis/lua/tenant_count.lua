-- tenant_count: how many of a tenant's tokens are live now (expired members are not counted).
--
-- KEYS[1]  {prefix}:tenant:{tenant}   ZSET, member = job id, score = expiry (ms, server clock)
--
-- A script, not TIME then ZCOUNT from the client: the scores are on the clock of
-- the node that holds the key, which on a Redis Cluster is not the node TIME asks.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')

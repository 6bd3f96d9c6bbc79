"""The Redis side of the runtime: the ``LeaseStore`` seam on Redis (leases, the dataset
epoch, tenant tokens, workers' presence), one Lua script per state transition
(``redis/lua/``). The implementation is ``redis/_leases.py``; import from here.

Inside this package ``import redis`` is still redis-py (imports are absolute).
"""

from queue_runtime.redis._leases import RedisLeaseStore

__all__ = ["RedisLeaseStore"]

"""The worker side of queue_runtime: ``Worker(runtime, pools, concurrency).run()``."""

from queue_runtime.worker._context import JobContext, current_context, current_job
from queue_runtime.worker._wiring import claim_schedule
from queue_runtime.worker._worker import Worker

__all__ = ["JobContext", "Worker", "claim_schedule", "current_context", "current_job"]

"""Signal receivers: the receiver enqueues the job instead of running it.

Supported shape: a receiver (``@receiver(post_save, sender=Order)`` or
``post_save.connect(on_saved)``) whose body calls the job with serialisable
arguments, e.g. ``resize(instance.pk)`` -> ``resize.enqueue(instance.pk)``.
The scanner may point at the call inside the receiver or at the receiver
itself; both are handled (every call of the job in the receiver's body is
rewritten).

Not supported (skipped with a reason): a receiver that *is* the job. Its
arguments are the sender class and a model instance, which cannot be
serialised; extract the work into a function taking the primary key first.
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.enqueue import enqueue_statement, is_job_ref
from codemods._syntax import last_name, statement_call
from codemods._types import Block, Edit, Skip, Target

RECEIVER_IS_JOB = (
    "the receiver is itself the job: its arguments (sender, instance) cannot be serialised; "
    "move the work into a function taking the primary key and call it from the receiver"
)


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    call = statement_call(block.statements[index])
    if (
        call is not None
        and last_name(call.func) == "connect"
        and call.args
        and is_job_ref(call.args[0].value, target)
    ):
        return Skip(RECEIVER_IS_JOB)
    return enqueue_statement(block, index, target)


def check_receiver(func: cst.FunctionDef, target: Target) -> Skip | None:
    """A site recorded at the receiver's header: a Skip when the receiver is the job itself."""
    return Skip(RECEIVER_IS_JOB) if func.name.value == target.name else None

"""A library callable run as a job (``on_commit(partial(default_storage.delete, name))``,
``hass.async_add_executor_job(shutil.rmtree, path)``): there is no project function, so it
is analysed as a one-line job that calls it with the arguments bound where it was handed
over. The catalogue (or the library's source, when installed) says what it does. The values
bound there are the same on a retry, like a project job's parameters, so they count as
inputs (a key among them is derived)."""

from __future__ import annotations

import re

from inventory.summary import CallInfo, FunctionInfo, Span

VALUE_METHOD = (
    "a library method of a value the caller holds: what a repeat does depends on that "
    "value's state, so it is not analysed as a job of its own"
)
BUILTIN = (
    "a builtin applied to values the caller holds (an iterator advanced, an object read): "
    "what a repeat does depends on their state, so it is not analysed as a job of its own"
)
LIBRARY_JOB = " [library callable]"  # the synthetic function's key: never a dotted name


def value_bound(name: str) -> str:
    """Why the library callable ``name`` is no job of its own, "" when it may be one: a
    method of a value's class (``io.IOBase.write``: ``to_thread(f.write, chunk)``, whose
    repeat depends on the file's position) or a builtin (``run_in_executor(None, next,
    rows)``: a repeat advances the iterator again)."""
    if "." not in name:
        return f"{name}: {BUILTIN}"
    owner = name.rsplit(".", 2)[-2] if name.count(".") >= 2 else ""
    return f"{name}: {VALUE_METHOD}" if owner[:1].isupper() else ""


NO_PROJECT_FUNCTION = "no project function to move: wrap it in one"


def library_call(
    name: str,
    written: str,
    span: Span,
    positional: list[str],
    named: dict[str, str],
    result_used: bool,
) -> FunctionInfo:
    """The one-line job calling ``name`` with ``positional`` and ``named`` (sources as
    written); ``written`` is the callable as handed over, for the receiver it was read on."""
    method = name.rsplit(".", 1)[-1]
    receiver = re.search(rf"([\w.()\[\]'\"]+)\.{re.escape(method)}\b", written)
    call = CallInfo(
        target=name,
        receiver_source=receiver.group(1) if receiver else "",
        span=span,
        args=["<expr>" for _ in positional],
        arg_sources=positional,
        kwargs={k: "<expr>" for k in named},
        kwarg_sources=named,
        result_used=result_used,
    )
    sources = [*positional, *named.values()]
    bound = sorted({w for s in sources for w in re.findall(r"[A-Za-z_]\w*", s)})
    return FunctionInfo(
        qualname=f"{name}{LIBRARY_JOB}",
        name=method,
        span=span,
        params=bound,
        calls=[call.model_copy(update={"uses_param": bound})],
    )

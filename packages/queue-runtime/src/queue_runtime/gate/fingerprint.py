"""The fingerprint of a job's code: its source and the project code it calls.

Starting at the job function, every function or class it references through
its globals (names, ``module.attribute`` chains, closures, nested functions)
that lives in the same top-level package is visited, transitively, up to
``MAX_OBJECTS``. The sha256 covers each visited object's name (relative to the
top-level package) and source text, in sorted order, so it is stable across
processes and machines with the same code. ``inspect`` only: no parsing library, no inventory.

Deterministic whatever ``PYTHONHASHSEED`` is: references are followed in the
order the code names them (never in set order), every visited object counts
(several objects may share one name: the methods ``dataclass`` generates are
all ``__create_fn__.<locals>.__repr__`` of their module, and a ``slots=True``
dataclass leaves two classes of one name), and constants of code without
source are rendered with their sets sorted.

What it does not see: code reached dynamically (``getattr`` with a computed
name, registries, dependency injection), other packages (their versions are
the lock file's business), data files, and configuration.
"""

from __future__ import annotations

import hashlib
import inspect
import types
from collections.abc import Callable, Iterator
from typing import Any

MAX_OBJECTS = 256


def fingerprint(job_function: Callable[..., Any]) -> str:
    """sha256 (hex) of the job function's source and of the project code it calls."""
    digest = hashlib.sha256()
    for name, source in sorted(_visit(_unwrap(job_function))):
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(source.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _visit(root: Any) -> list[tuple[str, str]]:
    """(name, source) of every object reached from ``root``, breadth first, in the code's order."""
    package = _package(root)
    found: list[tuple[str, str]] = []
    queue: list[Any] = [root]
    seen: set[int] = set()
    while queue and len(found) < MAX_OBJECTS:
        obj = queue.pop(0)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        found.append(("<job>" if obj is root else _relative_name(obj, package), _source(obj)))
        queue.extend(ref for ref in _references(obj) if _package(ref) == package)
    return found


def _unwrap(obj: Any) -> Any:
    """A JobFunction (or any functools.wraps wrapper) -> the function it wraps."""
    inner = getattr(obj, "fn", None)
    if callable(inner) and not isinstance(obj, type):
        obj = inner
    try:
        return inspect.unwrap(obj)
    except ValueError:  # a cycle of __wrapped__
        return obj


def _relative_name(obj: Any, package: str | None) -> str:
    """``shop.billing.rate`` -> ``.billing.rate``: the same code under another package name is the same."""
    module = str(obj.__module__)
    if package and (module == package or module.startswith(package + ".")):
        module = module[len(package) :]
    return f"{module}.{obj.__qualname__}"


def _package(obj: Any) -> str | None:
    if not isinstance(obj, types.FunctionType | type):
        return None
    module = getattr(obj, "__module__", None)
    return module.split(".")[0] if isinstance(module, str) else None


def _source(obj: Any) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        code = getattr(obj, "__code__", None)
        if code is not None:  # no file (exec, REPL): the bytecode and constants stand in
            return f"{code.co_code.hex()}{_constants(code)}"
        return repr(sorted(vars(obj))) if isinstance(obj, type) else repr(obj)


def _constants(code: types.CodeType) -> str:
    return repr([_constant(c) for c in code.co_consts if not isinstance(c, types.CodeType)])


def _constant(value: Any) -> Any:
    """A constant with a stable repr: ``x in {"a", "b"}`` compiles to a frozenset, in hash order."""
    if isinstance(value, frozenset):
        return ("frozenset", sorted(repr(_constant(v)) for v in value))
    if isinstance(value, tuple):
        return tuple(_constant(v) for v in value)
    return value


def _references(obj: Any) -> Iterator[Any]:
    """Functions and classes ``obj`` may call: through globals, closures, methods, bases."""
    if isinstance(obj, type):
        yield from (base for base in obj.__bases__ if base is not object)
        for member in vars(obj).values():
            function = _member_function(member)
            if function is not None:
                yield from _function_references(function)
        return
    yield from _function_references(obj)


def _member_function(member: Any) -> types.FunctionType | None:
    if isinstance(member, staticmethod | classmethod):
        member = member.__func__
    elif isinstance(member, property):
        member = member.fget
    return member if isinstance(member, types.FunctionType) else None


def _function_references(fn: types.FunctionType) -> Iterator[Any]:
    names = list(dict.fromkeys(_names(fn.__code__)))  # the code's order: a set's is the seed's
    namespace = fn.__globals__
    for name in names:
        value = namespace.get(name)
        if value is None:
            continue
        if isinstance(value, types.ModuleType):
            # `module.helper(...)`: the attribute names are in co_names too.
            for attribute in names:
                target = getattr(value, attribute, None)
                if target is not None:
                    yield _unwrap_safely(target)
            continue
        yield _unwrap_safely(value)
    for cell in fn.__closure__ or ():
        try:
            yield _unwrap_safely(cell.cell_contents)
        except ValueError:  # an empty cell
            continue


def _unwrap_safely(value: Any) -> Any:
    try:
        return _unwrap(value) if callable(value) else value
    except RuntimeError:
        # A context-local proxy (Flask's current_app, request, g) raises on any attribute
        # outside its app context; it is not project code, so it adds nothing either way.
        return None


def _names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # nested functions, lambdas, comprehensions
            yield from _names(const)

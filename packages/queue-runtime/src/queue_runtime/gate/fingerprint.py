"""The fingerprint of a job's code: its source and everything of the project it can reach.

Starting at the job function, every object its code can reach in the same
top-level package is visited, transitively, up to ``MAX_OBJECTS``:

- functions and classes it names: globals, ``module.attribute`` chains,
  closures, nested functions, methods, base classes, default arguments,
  decorators;
- module-level values it reads (``RATE = 1``, ``client = Client()``,
  ``PRICES = {...}``): by the text of the statements binding them
  (:mod:`queue_runtime.gate._bindings`; ``from m import NAME`` is followed to
  ``m``), never by their value, which may change while the process runs; the
  functions and classes those statements name are visited in turn;
- the class of a module-level instance (``client.charge(...)`` reaches
  ``Client.charge``), and of an instance given as a default argument.

The sha256 covers each visited object's name (relative to the top-level
package) and source text, in sorted order (a function's default values that
are plain constants are appended to its source), so it is stable across
processes and machines with the same code. ``inspect`` and ``ast`` only: no
parsing library, no inventory.

Deterministic whatever ``PYTHONHASHSEED`` is: references are followed in the
order the code names them (never in set order), every visited object counts
(several objects may share one name: the methods ``dataclass`` generates are
all ``__create_fn__.<locals>.__repr__`` of their module, and a ``slots=True``
dataclass leaves two classes of one name), and constants of code without
source are rendered with their sets sorted.

What it does not see: code reached dynamically (``getattr`` with a computed
name, registries, dependency injection), other packages (their versions are
the lock file's business), data files, configuration (environment variables,
settings objects), values computed at import from those, and what a closure
holds other than functions and classes.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import types
from collections.abc import Callable, Iterator
from enum import Enum
from typing import Any

from queue_runtime.gate._bindings import Binding, ModuleDefinitions, source_names

MAX_OBJECTS = 256


def fingerprint(job_function: Callable[..., Any]) -> str:
    """sha256 (hex) of the job function's source and of the project code it can reach."""
    digest = hashlib.sha256()
    for name, source in sorted(_Visit(_unwrap(job_function)).run()):
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(source.encode())
        digest.update(b"\0")
    return digest.hexdigest()


class _Visit:
    """(name, source) of every object reached from ``root``, breadth first, in the code's order."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.package = _package(root)
        self.definitions = ModuleDefinitions()
        self._texts: dict[int, str | None] = {}

    def run(self) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        queue: list[Any] = [self.root]
        seen: set[object] = set()
        while queue and len(found) < MAX_OBJECTS:
            item = queue.pop(0)
            key = item if isinstance(item, Binding) else id(item)
            if key in seen:
                continue
            seen.add(key)
            found.append(self._entry(item))
            queue.extend(ref for ref in self._references(item) if self._ours(ref))
        return found

    def _entry(self, item: Any) -> tuple[str, str]:
        if isinstance(item, Binding):
            return _relative(item.module, self.package) + "." + item.name, self._binding_text(item)
        name = "<job>" if item is self.root else _relative_name(item, self.package)
        return name, _source(item, self._text(item)) + _defaults(item)

    def _text(self, obj: Any) -> str | None:
        """``inspect.getsource``, once per object (a class's costs a parse of its module)."""
        if id(obj) not in self._texts:
            try:
                self._texts[id(obj)] = inspect.getsource(obj)
            except (OSError, TypeError):  # no file: exec, REPL, builtins
                self._texts[id(obj)] = None
        return self._texts[id(obj)]

    def _ours(self, ref: Any) -> bool:
        if isinstance(ref, Binding):
            return ref.module.split(".")[0] == self.package
        return _package(ref) == self.package

    def _references(self, item: Any) -> Iterator[Any]:
        if isinstance(item, Binding):
            yield from self._binding_references(item)
        elif isinstance(item, type):
            yield from (base for base in item.__bases__ if base is not object)
            for member in vars(item).values():
                function = _member_function(member)
                if function is not None:  # the class's source has the methods' defaults
                    yield from self._function_references(function, [])
            names = source_names(self._text(item))
            yield from self._resolve(_namespace(item.__module__), names)
        else:
            yield from self._function_references(item, source_names(self._text(item)))

    def _function_references(self, fn: types.FunctionType, more: list[str]) -> Iterator[Any]:
        """What ``fn`` names; ``more``: names of its source (defaults and decorators)."""
        names = list(dict.fromkeys([*_names(fn.__code__), *more]))  # never a set: seed order
        yield from self._resolve(fn.__globals__, names)
        for cell in fn.__closure__ or ():
            try:
                yield _unwrap_safely(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
        for value in _default_values(fn):
            yield from _value_references(value)

    def _resolve(self, namespace: dict[str, Any], names: list[str]) -> Iterator[Any]:
        """What ``names`` are in a module's namespace: functions, classes, module-level values."""
        module = namespace.get("__name__")
        for name in names:
            if name in namespace and not _dunder(name):
                yield from self._named(module, name, namespace[name], names, set())

    def _named(
        self, module: str | None, name: str, value: Any, names: list[str], seen: set[str]
    ) -> Iterator[Any]:
        if not isinstance(value, types.ModuleType):
            yield from _named_value(module, name, value)
        elif value.__name__.split(".")[0] == self.package and value.__name__ not in seen:
            # `module.helper(...)`, `pkg.sub.RATE`: the attribute names are in `names` too.
            seen.add(value.__name__)
            attributes = vars(value)
            for attribute in names:
                if attribute in attributes and not _dunder(attribute):
                    yield from self._named(
                        value.__name__, attribute, attributes[attribute], names, seen
                    )

    def _binding_text(self, binding: Binding) -> str:
        definition = self.definitions.definition(binding)
        if definition is None or not (definition.text or definition.imported):
            return _render(_namespace(binding.module).get(binding.name))
        imports = [
            f"from {_relative(b.module, self.package)} import {b.name}" for b in definition.imported
        ]
        return "\n".join(part for part in (definition.text, *imports) if part)

    def _binding_references(self, binding: Binding) -> Iterator[Any]:
        definition = self.definitions.definition(binding)
        if definition is None:
            return
        yield from self._resolve(_namespace(binding.module), definition.reads)
        for imported in definition.imported:
            namespace = _namespace(imported.module)
            if imported.name in namespace:
                yield from _named_value(imported.module, imported.name, namespace[imported.name])


def _named_value(module: str | None, name: str, value: Any) -> Iterator[Any]:
    """A function or class itself; any other value by its binding, and its class."""
    target = _unwrap_safely(value)
    if isinstance(target, types.FunctionType | type):
        yield target
        return
    if isinstance(value, types.ModuleType):  # a module's attributes are followed by name
        return
    if isinstance(module, str):
        yield Binding(module, name)
    yield type(value)


def _value_references(value: Any) -> Iterator[Any]:
    target = _unwrap_safely(value)
    yield target if isinstance(target, types.FunctionType | type) else type(value)


def _namespace(module: str | None) -> dict[str, Any]:
    found = sys.modules.get(module) if isinstance(module, str) else None
    return vars(found) if found is not None else {}


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


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
    return f"{_relative(str(obj.__module__), package)}.{obj.__qualname__}"


def _relative(module: str, package: str | None) -> str:
    if package and (module == package or module.startswith(package + ".")):
        return module[len(package) :]
    return module


def _package(obj: Any) -> str | None:
    if not isinstance(obj, types.FunctionType | type):
        return None
    module = getattr(obj, "__module__", None)
    return module.split(".")[0] if isinstance(module, str) else None


def _source(obj: Any, text: str | None) -> str:
    if text is not None:
        return text
    code = getattr(obj, "__code__", None)
    if code is not None:  # no file (exec, REPL): the bytecode and constants stand in
        return f"{code.co_code.hex()}{_constants(code)}"
    return repr(sorted(vars(obj))) if isinstance(obj, type) else repr(obj)


def _default_values(fn: types.FunctionType) -> list[Any]:
    return [*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()]


def _defaults(obj: Any) -> str:
    """A function's default values, rendered: ``rate=RATE`` is RATE's value at definition."""
    if not isinstance(obj, types.FunctionType):
        return ""
    values = _default_values(obj)
    return "\0defaults " + ", ".join(_render(v) for v in values) if values else ""


def _render(value: Any) -> str:
    """A plain constant's text (stable across processes); other values only by their type."""
    if value is None or isinstance(value, bool | int | float | complex | str | bytes):
        return repr(value)
    if isinstance(value, Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_render(v) for v in value) + ")"
    if isinstance(value, frozenset):
        return f"frozenset({sorted(_render(v) for v in value)!r})"
    return f"<{type(value).__qualname__}>"


def _constants(code: types.CodeType) -> str:
    return repr([_constant(c) for c in code.co_consts if not isinstance(c, types.CodeType)])


def _constant(value: Any) -> Any:
    """A constant with a stable repr: ``x in {"a", "b"}`` compiles to a frozenset, in hash order."""
    if isinstance(value, frozenset):
        return ("frozenset", sorted(repr(_constant(v)) for v in value))
    if isinstance(value, tuple):
        return tuple(_constant(v) for v in value)
    return value


def _member_function(member: Any) -> types.FunctionType | None:
    if isinstance(member, staticmethod | classmethod):
        member = member.__func__
    elif isinstance(member, property):
        member = member.fget
    return member if isinstance(member, types.FunctionType) else None


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

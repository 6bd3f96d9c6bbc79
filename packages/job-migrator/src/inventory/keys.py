"""Idempotency keys checked against a job, statically: what ``plan`` and ``apply`` refuse.

The forms are the runtime's (``queue_runtime.keys``, which documents them):
a template of ``{parameter}`` / ``{parameter.attr}`` fields and ``{*}`` (a
digest of every argument), or a key function ``package.module:function``
called with the job's own arguments. The runtime checks the same rules for
real, importing the function; here the function's module is *read* from the
scanned project (the analyzer never imports what it scans), so the rule is
duplicated in a few lines rather than shared: ``inventory`` may not import
``queue_runtime``.

Every problem is one line that says what to fix.

:func:`object_parameters` reads the job's own source the same way (never
importing it): which parameters hold an object, whose ``str()`` is no key
(``inventory._classify._suggest`` has the rule).
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from inventory._classify._suggest import (
    CALL_FIELD,
    DIGEST_FIELD,
    call_key,
    secret_name,
    suggest_key,
)
from inventory.models import CallSite, Job

__all__ = [
    "CALL_FIELD",
    "DIGEST_FIELD",
    "Param",
    "call_key",
    "key_problem",
    "object_parameters",
    "parameters_problem",
    "secret_name",
    "shared_key_problems",
    "suggest_key",
]

_KEY_FUNCTION = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a key function as written: name, star (``*`` / ``**`` / none), default."""

    name: str
    star: str = ""
    default: bool = False
    keyword_only: bool = False


def key_problem(job: str, key: str, parameters: list[str], root: Path | None = None) -> str | None:
    """Why ``key`` cannot be built for ``job`` (its ``parameters``), or None when it can.

    ``root``: the scanned project, where a key function's module is read.
    """
    function = _key_function(key)
    if function is not None:
        return _function_problem(job, key, function, parameters, root)
    try:
        fields = [n for _, n, _, _ in string.Formatter().parse(key) if n is not None]
    except ValueError as exc:
        return f"key {key!r} of {job} is not a valid template ({exc})"
    if not fields:
        return (
            f"key {key!r} of {job} has no field: every call would share it, so the job would run"
            " once, ever; add {*} (a digest of every argument) or its parameters"
        )
    for field in fields:
        if field not in (DIGEST_FIELD, CALL_FIELD) and (
            not _PATH.match(field) or field.split(".")[0] not in parameters
        ):
            return (
                f"key {key!r}: {{{field}}} is not a parameter of {job} (its parameters: "
                f"{', '.join(parameters) or 'none'}); use one of them, or {{*}}"
            )
    return None


def shared_key_problems(keys: dict[str, str], moving: Iterable[str]) -> list[str]:
    """Key templates of two jobs that can give the same key, one line each, for the pairs
    with a job in ``moving``: ``{order_id}`` of one job and ``{order_id}`` (or ``{user_id}``)
    of another are the same text around their fields, so order 42 and user 42 take one key.
    A key names one call, of one job: the runtime refuses it for the other job's call
    (``KeyReused``, raised at that call's enqueue, in its request). ``{*}`` is a digest over
    the job's name too, and ``{+}`` is made for each call: neither is ever shared. A key
    function's keys are its own to keep apart."""
    wanted = set(moving)
    by_shape: dict[str, list[str]] = {}
    for job in sorted(keys):
        shape = _shape(keys[job])
        if shape is not None:
            by_shape.setdefault(shape, []).append(job)
    problems = []
    for jobs in by_shape.values():
        for first, other in pairwise(jobs):
            if first in wanted or other in wanted:
                problems.append(
                    f"keys {keys[first]!r} of {first} and {keys[other]!r} of {other} can be the "
                    "same key (the same text around their fields), and a key names one call of "
                    "one job: the runtime would refuse the second job's call (KeyReused, in its "
                    f"request); give each key text of its own, such as "
                    f"'{first.rpartition('.')[2]}:{keys[first]}'"
                )
    return problems


def _shape(key: str) -> str | None:
    """The template's text with each field a marker; None for a key no other job can share:
    a key function, a template with ``{*}`` or ``{+}``, or one that does not parse."""
    if _key_function(key) is not None:
        return None
    try:
        parts = list(string.Formatter().parse(key))
    except ValueError:
        return None
    if any(name in (DIGEST_FIELD, CALL_FIELD) for _, name, _, _ in parts):
        return None
    return "".join(text + ("\x00" if name is not None else "") for text, name, _, _ in parts)


def _key_function(key: str) -> tuple[str, str] | None:
    if "{" in key or not _KEY_FUNCTION.match(key):
        return None
    module, _, name = key.partition(":")
    return module, name


def _function_problem(
    job: str, key: str, function: tuple[str, str], parameters: list[str], root: Path | None
) -> str | None:
    module, name = function
    if root is None:
        return None  # nowhere to read it from: the runtime checks it when it imports it
    path = _module_path(root, module)
    if path is None:
        return (
            f"key function {key!r}: no module {module} in the project "
            f"({module.replace('.', '/')}.py not found under {root}); fix the module path"
        )
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        return f"key function {key!r}: cannot read {path.name} ({exc})"
    found = _top_level(tree, name)
    if found is None:
        return (
            f"key function {key!r}: {module} defines no function {name}; define it or fix the name"
        )
    if not isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef):
        return None  # an assignment or an import: its signature is only known at run time
    problem = parameters_problem(parameters, _params(found.args))
    return f"key function {key!r} for {job}: {problem}" if problem else None


def _module_path(root: Path, module: str) -> Path | None:
    relative = Path(*module.split("."))
    for base in (root, root / "src"):
        for candidate in (base / relative.with_suffix(".py"), base / relative / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _top_level(tree: ast.Module, name: str) -> ast.stmt | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node
        if isinstance(node, ast.ImportFrom) and any(
            (a.asname or a.name) == name for a in node.names
        ):
            return node  # imported from elsewhere: its signature is not read here
    return None


def _params(args: ast.arguments) -> list[Param]:
    positional = [*args.posonlyargs, *args.args]
    defaults = len(positional) - len(args.defaults)
    params = [Param(a.arg, default=i >= defaults) for i, a in enumerate(positional)]
    if args.vararg:
        params.append(Param(args.vararg.arg, star="*"))
    params += [
        Param(a.arg, default=d is not None, keyword_only=True)
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        params.append(Param(args.kwarg.arg, star="**"))
    return params


def parameters_problem(job: list[str], function: list[Param]) -> str | None:
    """Why a function of ``function``'s parameters cannot take every call of a job whose
    parameters are ``job`` (positional-or-keyword, in order), or None."""
    var_pos = any(p.star == "*" for p in function)
    var_kw = any(p.star == "**" for p in function)
    positional = [p.name for p in function if not p.star and not p.keyword_only]
    names = {p.name for p in function if not p.star}
    for index, name in enumerate(job):
        if index < len(positional) and positional[index] != name:
            return f"parameter {index + 1} is {positional[index]}, the job's is {name}"
        if name not in names and not (var_pos and var_kw):
            return f"it takes no parameter {name} (the job's: {', '.join(job)})"
    extra = [p.name for p in function if not p.star and not p.default and p.name not in job]
    return f"it requires {', '.join(extra)}, which the job does not take" if extra else None


# -- parameters that hold an object -----------------------------------------------
_PLAIN_METHODS = frozenset(
    name
    for kind in (str, bytes, int, float, list, dict, set, tuple)
    for name in dir(kind)
    if not name.startswith("_")
)
_PLAIN_TYPES = frozenset(
    {
        *("str", "bytes", "int", "float", "bool", "complex", "None", "Any", "object"),
        *("UUID", "Decimal", "date", "datetime", "time", "timedelta"),
        *("list", "dict", "set", "frozenset", "tuple", "List", "Dict", "Set", "FrozenSet"),
        *("Tuple", "Sequence", "Mapping", "Iterable", "Collection", "Optional", "Union"),
        *("Literal", "Annotated"),
    }
)


def object_parameters(
    job: Job, sites: Iterable[CallSite] = (), root: Path | None = None
) -> frozenset[str]:
    """The parameters of ``job`` that hold an object (a model, a form), whose text is no key.

    An object: passed at a site as a value the scan calls not JSON (a model instance, a
    request, a file), annotated with a class, or read as one in the job's body
    (``user.email``, ``form.validate()``; calling a method of ``str`` or ``int`` is not).
    """
    params = [p for p in job.parameters if p not in ("self", "cls")]
    found = set(_not_data_at_sites(params, sites))
    function = _job_function(job, root)
    if function is not None:
        found |= _read_as_objects(function, params)
    return frozenset(found)


def _not_data_at_sites(params: list[str], sites: Iterable[CallSite]) -> Iterator[str]:
    for site in sites:
        for argument in site.arguments:
            if argument.serialisable is not False:
                continue
            if argument.name.startswith("#") and argument.name[1:].isdigit():
                index = int(argument.name[1:])
                if index < len(params):
                    yield params[index]
            elif argument.name in params:
                yield argument.name


def _job_function(job: Job, root: Path | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    if root is None or job.location is None:
        return None
    try:
        tree = ast.parse((root / job.location.path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    name, line = job.qualname.rpartition(".")[2], job.location.line
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
    ]
    return min(found, key=lambda node: abs(node.lineno - line), default=None)


def _read_as_objects(
    function: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]
) -> set[str]:
    arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    found = {
        a.arg
        for a in arguments
        if a.arg in params and a.annotation is not None and _names_a_class(a.annotation)
    }
    called = {id(node.func) for node in ast.walk(function) if isinstance(node, ast.Call)}
    for node in ast.walk(function):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            continue
        if node.value.id in params and not (id(node) in called and node.attr in _PLAIN_METHODS):
            found.add(node.value.id)
    return found


def _names_a_class(annotation: ast.expr) -> bool:
    """Does the annotation name a class that is not a plain value (``User``, ``list[User]``)?"""
    if isinstance(annotation, ast.Constant):
        if not isinstance(annotation.value, str):
            return False
        try:
            return _names_a_class(ast.parse(annotation.value, mode="eval").body)
        except SyntaxError:
            return False
    if isinstance(annotation, ast.Name | ast.Attribute):
        name = annotation.id if isinstance(annotation, ast.Name) else annotation.attr
        return name not in _PLAIN_TYPES
    if isinstance(annotation, ast.Subscript):
        base = annotation.value
        if (base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")) == "Literal":
            return False
        if _names_a_class(base):
            return True
        inner = annotation.slice
        parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        return any(_names_a_class(part) for part in parts)
    if isinstance(annotation, ast.BinOp):
        return _names_a_class(annotation.left) or _names_a_class(annotation.right)
    return False

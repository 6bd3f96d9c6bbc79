"""Syntactic effects that are not calls: augmented assignments, SQL text, dynamic dispatch."""

from __future__ import annotations

import ast
import re
from typing import TypeGuard

from inventory._extract._resolve import TABLE, Resolved, Resolver, dotted_source
from inventory._extract._scopes import Binding, BindingKind, ScopeKind
from inventory._extract._source import Located, SourceText, clean, span_of
from inventory.summary import PARAMETER_DISPATCH, Fact, FactKind, ReceiverKind

# Statements that change data; requiring the second keyword keeps prose ("Update the docs") out.
_SQL = re.compile(
    r"\s*(?:WITH\s.+?\)\s*)?(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|MERGE\s+INTO|UPSERT\s"
    r"|REPLACE\s+INTO|TRUNCATE\s|SELECT\s.+?\sFROM\s)",
    re.IGNORECASE | re.DOTALL,
)
_SQL_STARTS = frozenset("IUDMRTSWiudmrtsw")
_CONSUMING = frozenset(
    {
        "get",
        "get_nowait",
        "accept",
        "recv",
        "recvfrom",
        "serve_forever",
        "handle_request",
        "receive",
    }
)
_QUEUE_TYPES = ("queue.", "asyncio.Queue", "asyncio.queues.", "multiprocessing.", "janus.")
_QUEUE_NAMES = frozenset({"q", "inbox", "jobs", "tasks", "work", "events", "messages", "mailbox"})
# Not ``importlib.import_module`` / ``__import__``: importing calls nothing of the job's. A
# module's body runs once per process (later imports are answered by ``sys.modules``, as a
# retry's would be), like the imports at start-up; what the job then calls on the module is
# a call of its own (a gap when the module's name is computed).
_DYNAMIC_CALLS = frozenset({"builtins.eval", "builtins.exec"})
# Library calls whose result, called, calls what their arguments name (their docs):
# ``partial(notify, user)()`` runs ``notify``, ``methodcaller("deliver")(order)`` runs
# ``order.deliver()``. The catalogue calls the first call pure; the second is a dispatch.
_CALLING_RESULTS = frozenset({"functools.partial", "operator.methodcaller"})


def sql_fact(text: str, node: Located) -> Fact | None:
    stripped = text.lstrip()
    if len(stripped) < 10 or stripped[0] not in _SQL_STARTS or not _SQL.match(stripped):
        return None
    return Fact(kind=FactKind.SQL_LITERAL, span=span_of(node), text=clean(stripped[:200]))


def augassign_fact(node: ast.AugAssign, globals_: set[str], text: SourceText) -> Fact | None:
    target = node.target
    if isinstance(target, ast.Attribute):
        kind = FactKind.AUGASSIGN_ATTR
    elif isinstance(target, ast.Subscript):
        kind = FactKind.AUGASSIGN_SUBSCRIPT
    elif isinstance(target, ast.Name) and target.id in globals_:
        kind = FactKind.AUGASSIGN_GLOBAL
    else:
        return None
    return Fact(kind=kind, span=span_of(node), text=text.segment(node), target=text.segment(target))


def self_increment_fact(
    node: ast.Assign, text: SourceText, resolver: Resolver | None = None
) -> Fact | None:
    """``obj.n = obj.n + 1`` is the same read-modify-write as ``obj.n += 1``; so is
    ``totals[k] = totals.get(k, 0) + v`` on a subscript (an accumulator), and so is
    ``obj.n = F("n") - 1`` (the database computes it from the stored value when saved).
    Any other assignment to a money field (``key.spend = 0.0``) is a STATE_ASSIGN fact."""
    if len(node.targets) != 1:
        return None
    target = node.targets[0]
    if isinstance(target, ast.Attribute) and f_expression(node.value, resolver):
        written = dotted_source(target)
        if written is not None:
            return Fact(
                kind=FactKind.AUGASSIGN_ATTR,
                span=span_of(node),
                text=text.segment(node),
                target=written,
            )
    if not isinstance(node.value, ast.BinOp):
        return state_assign_fact(node, text)
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Subscript):
        return _subscript_increment(node, target, value, text)
    if not isinstance(target, ast.Attribute) or not isinstance(value.left, ast.Attribute):
        return state_assign_fact(node, text)
    written = dotted_source(target)
    if written is None or written != dotted_source(value.left):
        return state_assign_fact(node, text)
    return Fact(
        kind=FactKind.AUGASSIGN_ATTR, span=span_of(node), text=text.segment(node), target=written
    )


def f_expression(value: ast.expr, resolver: Resolver | None) -> bool:
    """A value computed from stored columns: ``F("n") + 1``, ``F("n") - amount``,
    ``Greatest(F("n") - 1, 0)``, ``Concat(F("name"), Value("!"))``. Saved or passed to
    ``update()``, the database evaluates it against the row as it is then, so a retry
    applies it again. A bare ``F("other")`` (a copy of a column) is not one."""
    if _is_f_call(value, resolver):
        return False
    return any(_is_f_call(node, resolver) for node in ast.walk(value))


def _is_f_call(node: ast.AST, resolver: Resolver | None) -> bool:
    """A call of ``F``: ``F(...)``, ``models.F(...)``, ``Col(...)`` after ``from
    django.db.models import F as Col``. Whatever ``F`` resolves to (an import not followed,
    a star import) is taken to be Django's: when in doubt, an increment."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    written = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    resolved = resolver.dotted(func) if resolver is not None else None
    if resolved is None or resolved.startswith("?"):
        return written == "F"
    return resolved.rpartition(".")[2] == "F"


def _subscript_increment(
    node: ast.Assign, target: ast.Subscript, value: ast.BinOp, text: SourceText
) -> Fact | None:
    """``d[k] = d.get(k, 0) + v`` / ``d[k] = v + d[k]``: either operand reads the same slot."""
    container = text.segment(target.value)
    if not any(_reads_slot(side, container, text) for side in (value.left, value.right)):
        return None
    return Fact(
        kind=FactKind.AUGASSIGN_SUBSCRIPT,
        span=span_of(node),
        text=text.segment(node),
        target=text.segment(target),
    )


def _reads_slot(node: ast.expr, container: str, text: SourceText) -> bool:
    if isinstance(node, ast.Subscript):
        return text.segment(node.value) == container
    func = node.func if isinstance(node, ast.Call) else None
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "get"
        and text.segment(func.value) == container
    )


# Fields that hold money or business-critical quantities: setting one (``key.spend = 0``,
# ``account.balance = total``) changes that state even without a read-modify-write. The
# classifier decides with the catalogue's [[augassign]] vocabulary; this only keeps the
# summary from recording every attribute assignment.
_STATE_FIELD = re.compile(
    r"(?i)(^|_)(balance|credits?|spend|spent|budget|cost|stock|quota|allocated)$"
)


def state_assign_fact(node: ast.Assign, text: SourceText) -> Fact | None:
    """``obj.spend = 0.0``: an attribute assignment to a money or business-state field."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Attribute):
        return None
    target = node.targets[0]
    if not _STATE_FIELD.search(target.attr):
        return None
    written = dotted_source(target)
    if written is None or written.count(".") != 1:
        return None  # ``self.a.b.spend``: too far from the object a write would persist
    return Fact(
        kind=FactKind.STATE_ASSIGN, span=span_of(node), text=text.segment(node), target=written
    )


def dispatch_fact(
    node: ast.Call,
    resolved: Resolved,
    params: frozenset[str],
    text: SourceText,
    resolver: Resolver | None = None,
) -> Fact | None:
    """``getattr(x, name)()``, ``registry[name]()``, ``eval``/``exec``, calls through a parameter.

    Not dynamic: ``import_module(name)`` / ``__import__(name)`` (importing is no call of the
    job's; what is called on the module is: a gap of its own, or with a literal name a call
    of that module), and ``getattr(logger, level)(msg)`` /
    ``log = getattr(logger, level); log(msg)`` on a ``logging`` logger, every public
    method of which only logs."""
    func = node.func
    if _is_getattr(func):
        if _on_logger(func, resolver):
            return None
        target = named_lookup(func, resolver) or "getattr"
    elif isinstance(func, ast.Subscript):
        target = text.segment(func.value)
    elif resolved.target in _DYNAMIC_CALLS:
        target = resolved.target
    elif isinstance(func, ast.Call) and _calling_result(func, resolver):
        target = _partial_of(func, resolver) or text.segment(func)
    elif isinstance(func, ast.Call) and _got_callable(func, resolver):
        target = text.segment(func)  # ``attrgetter("run")(job)()``: job.run, called
    elif isinstance(func, ast.Name) and resolved.receiver is ReceiverKind.UNKNOWN:
        bound = resolved.binding.node if resolved.binding is not None else None
        if _is_getattr(bound) and _on_logger(bound, resolver):
            return None
        target = f"{PARAMETER_DISPATCH}{func.id}" if func.id in params else f"variable {func.id}"
        if _is_getattr(bound) and func.id not in params:
            target = named_lookup(bound, resolver) or target  # ``fn = getattr(...); fn()``
        elif func.id not in params and resolved.binding is not None:
            # ``fn = TABLE.get(k); fn()``, ``fn = TABLE[k]; fn()``: one of the table's values
            table = resolved.binding.target
            target = f"{LOOKUP}{table}" if table.endswith(TABLE) else target
    else:
        return None
    return Fact(
        kind=FactKind.DYNAMIC_DISPATCH, span=span_of(node), text=text.segment(node), target=target
    )


def awaited_parameter_fact(node: ast.Await, param: str, text: SourceText) -> Fact:
    """``await coro`` where ``coro`` is a parameter: the function runs the coroutine (or
    waits for the task) its caller hands it, whose work the caller's argument decides
    (``notice_on_error(self.synchronize(keys))``): a call through the parameter, as
    ``cb()`` is."""
    return Fact(
        kind=FactKind.DYNAMIC_DISPATCH,
        span=span_of(node),
        text=text.segment(node),
        target=f"{PARAMETER_DISPATCH}{param}",
    )


def _calling_result(inner: ast.Call, resolver: Resolver | None) -> bool:
    if resolver is None:
        return False
    return resolver.expr(inner.func).target in _CALLING_RESULTS


# ``operator.attrgetter(name)(obj)`` / ``itemgetter(key)(table)`` read a value; called in
# turn (``attrgetter("run")(job)()``), what runs is that value: only known at run time.
_GETTERS = frozenset({"operator.attrgetter", "operator.itemgetter"})


def _got_callable(call: ast.Call, resolver: Resolver | None) -> bool:
    inner = call.func
    if resolver is None or not isinstance(inner, ast.Call):
        return False
    return resolver.expr(inner.func).target in _GETTERS


# ``partial(notify, user)()``: ``PARTIAL + "pkg.mail.notify"``, the function the call runs,
# which the call graph follows as a call of it.
PARTIAL = "partial "


def _partial_of(inner: ast.Call, resolver: Resolver | None) -> str:
    if resolver is None or resolver.expr(inner.func).target != "functools.partial":
        return ""
    first = inner.args[0] if inner.args else None
    named = resolver.dotted(first) if isinstance(first, ast.Name | ast.Attribute) else None
    return f"{PARTIAL}{named}" if named else ""


# ``fn = TABLE.get(k); fn()``: ``LOOKUP + "pkg.mod.TABLE[*]"``, the table (of this module, or
# imported) a local was read from (``Resolver.table_lookup``); the call graph follows each value.
LOOKUP = "lookup "

# ``getattr(chats, f"send_to_{channel}")``: ``NAMED + "pkg.chats send_to_*"``, the functions
# of a project module (or methods of ``self``'s class, ``"class:pkg.C"``) whose names fit the
# literal parts of the name built; the call graph follows each (``SymbolIndex.named_like``).
NAMED = "getattr "
_SELF_KINDS = (BindingKind.SELF, BindingKind.CLS)


def named_lookup(call: ast.Call, resolver: Resolver | None) -> str:
    """The ``NAMED`` target of ``getattr(OWNER, NAME)`` when OWNER is an imported module
    (or ``self`` / ``cls``) and NAME is a literal, or an f-string or ``+`` with a literal
    prefix or suffix; "" otherwise (the call stays a plain dynamic dispatch)."""
    if resolver is None or len(call.args) < 2 or not isinstance(call.args[0], ast.Name):
        return ""
    binding = resolver.scope.lookup(call.args[0].id)
    if binding is None or not binding.target:
        return ""
    if binding.kind is BindingKind.IMPORT:
        owner = binding.target
    elif binding.kind in _SELF_KINDS:
        owner = f"class:{binding.target}"
    else:
        return ""
    pattern = _name_pattern(call.args[1])
    return f"{NAMED}{owner} {pattern}" if pattern else ""


def _name_pattern(node: ast.expr) -> str:
    """``"send"`` -> ``send``; ``f"send_to_{x}"`` / ``"send_to_" + x`` -> ``send_to_*``;
    ``f"{x}_handler"`` -> ``*_handler``; "" when no literal part says anything."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) and node.value.isidentifier() else ""
    if isinstance(node, ast.JoinedStr):
        parts = node.values
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        parts = [node.left, node.right]
    else:
        return ""
    first, last = parts[0], parts[-1]
    prefix = first.value if isinstance(first, ast.Constant) and len(parts) > 1 else ""
    suffix = last.value if isinstance(last, ast.Constant) and len(parts) > 1 else ""
    if not isinstance(prefix, str) or not isinstance(suffix, str) or not (prefix or suffix):
        return ""
    if not re.fullmatch(r"\w*", prefix + suffix):
        return ""
    return f"{prefix}*{suffix}"


def _is_getattr(node: object) -> TypeGuard[ast.Call]:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
    )


def _on_logger(call: ast.Call, resolver: Resolver | None) -> bool:
    """``getattr(X, ...)`` where X is the ``logging`` module or a ``logging.Logger``: made by
    ``logging.getLogger(...)``, annotated ``Logger``, or a module-level / imported /
    ``self.`` name ``logger`` / ``log`` (``LOGGER``, ``_log``) of no other known type."""
    if resolver is None:
        return False
    subject = call.args[0]
    if isinstance(subject, ast.Name):
        return _logger_name(subject.id, resolver.scope.lookup(subject.id), resolver)
    if isinstance(subject, ast.Attribute) and isinstance(subject.value, ast.Name):
        owner = resolver.scope.lookup(subject.value.id)
        if owner is not None and owner.kind is BindingKind.SELF:
            cls = resolver.classes.get(owner.target)
            made = cls.attributes.get(subject.attr, "") if cls else ""
            return _LOGGER_NAME.match(subject.attr) is not None and _logger_type(made, True)
    return False


def _logger_name(name: str, binding: Binding | None, resolver: Resolver) -> bool:
    if binding is None:
        return False
    if binding.kind is BindingKind.IMPORT:
        # ``import logging`` itself, or ``from app.log import LOGGER`` (type unknown here).
        return binding.target == "logging" or (
            _LOGGER_NAME.match(name) is not None and not binding.target.startswith(_NOT_LOGGERS)
        )
    typed = binding.kind in (BindingKind.INSTANCE, BindingKind.PARAM, BindingKind.OTHER)
    if not typed:
        return False
    if _logger_type(binding.target, False):
        return True
    # ``logger = something()`` of unknown type: only a module-level logger name.
    module_level = resolver.scope.kind is ScopeKind.MODULE or name not in resolver.scope.names
    return (
        binding.kind is BindingKind.OTHER
        and (not binding.target or binding.target.endswith(_LOGGER_FACTORIES))
        and module_level
        and _LOGGER_NAME.match(name) is not None
    )


def _logger_type(made: str, untyped_ok: bool) -> bool:
    """``logging.getLogger()`` (what the binding was made by) or ``logging.Logger``."""
    if not made:
        return untyped_ok
    return made in _LOGGER_TYPES


_LOGGER_NAME = re.compile(r"(?i)^_*(logger|log)$")
_LOGGER_TYPES = frozenset(
    {"logging.getLogger()", "logging.getLogger", "logging.Logger", "logging.LoggerAdapter"}
    | {"logging.getLogger().getChild()", "logging.RootLogger", "logging.root"}
)
_NOT_LOGGERS = ("builtins.", "?")
_LOGGER_FACTORIES = ("getLogger()", "get_logger()")


def consumes(method: str, resolved: Resolved) -> bool:
    """Inside ``while True``, does this call take the next item from a queue or socket?"""
    if method not in _CONSUMING or resolved.receiver in (ReceiverKind.MODULE, ReceiverKind.CLASS):
        return False  # requests.get, Order.objects.get
    if method != "get" and method != "get_nowait":
        return True
    if resolved.receiver_type is not None:
        return resolved.receiver_type.startswith(_QUEUE_TYPES)
    name = resolved.receiver_source.rpartition(".")[2].lower()
    return "queue" in name or name in _QUEUE_NAMES


def loop_fact(node: ast.While, text: SourceText) -> Fact:
    return Fact(kind=FactKind.LOOP_FOREVER, span=span_of(node), text=text.segment(node, 80))


def service_fact(node: ast.While, text: SourceText) -> Fact:
    """``while is_active(): ... await asyncio.sleep(5)``: a monitor that runs until a liveness
    check says stop, waiting (or consuming) each round; or ``while True:`` consuming a queue
    or a stream each round (``jobs.get()``, ``async for message in pubsub.listen()``)."""
    return Fact(kind=FactKind.SERVICE_LOOP, span=span_of(node), text=text.segment(node, 80))


def stream_fact(node: ast.For | ast.AsyncFor, text: SourceText) -> Fact:
    return Fact(kind=FactKind.STREAM_LOOP, span=span_of(node), text=text.segment(node, 80))


def forever(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value) and test.value is not Ellipsis


# Words of a loop condition that runs until the process stops it (a stop flag or Event).
_SERVICE_WORDS = (
    "stop",
    "running",
    "active",
    "is_set",
    "shutdown",
    "alive",
    "state",
    "closed",
    "closing",
    "quit",
    "terminat",
    "exit",
)
_SLEEPS = frozenset({"time.sleep", "asyncio.sleep", "gevent.sleep", "eventlet.sleep"})


# Words of a loop condition that bounds it in time: a wait with a deadline ends. Each must
# start a word (``time_limit``, ``self.timeout``; not ``runtime_state``, ``uptime``).
_DEADLINE = re.compile(r"(?<![a-z])(?:time|deadline|timeout|monotonic|perf_counter|elapsed)")


def service_loop(test: ast.expr, text: SourceText) -> bool:
    """``while not self._stop.is_set()``, ``while self.state != STOPPED``, ``while self.running``;
    not ``while KEY not in session_state and time.perf_counter() - now < TIMEOUT`` (a wait
    with a deadline ends)."""
    if isinstance(test, ast.Constant):
        return False
    if any(
        isinstance(node, ast.Compare) and _DEADLINE.search(text.segment(node).lower()) is not None
        for node in ast.walk(test)
    ):
        return False  # ``time() < time_limit``: compared with a clock, the wait ends
    source = text.segment(test).lower()
    return any(word in source for word in _SERVICE_WORDS)


def blocks(method: str, target: str) -> bool:
    """Does this call wait inside a service loop's round (``self._event.wait(10)``, ``sleep``)?"""
    return method == "wait" or target in _SLEEPS


def waits_in_test(test: ast.expr) -> bool:
    """A loop condition that waits each round itself: ``while not self._stop.wait(5)``."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "wait"
        for node in ast.walk(test)
    )


# --- unique model fields: what makes a repeated insert hit a constraint ----------------
_ONE_TO_ONE = "OneToOneField"
_UNIQUE_KWARGS = ("unique", "primary_key")


def unique_keys(node: ast.ClassDef) -> list[str]:
    """The unique keys a model class declares, each as its fields joined by ``+``:
    ``user = models.OneToOneField(...)``, ``code = CharField(unique=True)`` (or
    ``primary_key=True``), ``Meta.unique_together`` and ``UniqueConstraint(fields=...)``
    without a condition. An insert giving every field of one of them from the job's
    inputs cannot add a second row on a repeat: the constraint refuses it."""
    found: list[str] = []
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.Name) and _unique_field(value):
                found.append(target.id)
        elif isinstance(stmt, ast.ClassDef) and stmt.name == "Meta":
            found += _meta_keys(stmt)
    return list(dict.fromkeys(found))


def _unique_field(value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if not name.endswith(("Field", "Key")):
        return False
    if name == _ONE_TO_ONE:
        return True
    return any(
        k.arg in _UNIQUE_KWARGS and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in value.keywords
    )


def _meta_keys(meta: ast.ClassDef) -> list[str]:
    found: list[str] = []
    for stmt in meta.body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        name = target.id if isinstance(target, ast.Name) else ""
        if name == "unique_together":
            found += _together(stmt.value)
        elif name == "constraints" and isinstance(stmt.value, ast.List | ast.Tuple):
            found += [k for c in stmt.value.elts if (k := _unique_constraint(c))]
    return found


def _together(value: ast.expr) -> list[str]:
    """``("a", "b")`` or ``[("a", "b"), ("c", "d")]``."""
    names = _strings(value)
    if names:
        return ["+".join(names)]
    if isinstance(value, ast.List | ast.Tuple):
        return ["+".join(n) for e in value.elts if (n := _strings(e))]
    return []


def _unique_constraint(node: ast.expr) -> str:
    if not isinstance(node, ast.Call):
        return ""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    keywords = {k.arg: k.value for k in node.keywords}
    if name != "UniqueConstraint" or "condition" in keywords or "fields" not in keywords:
        return ""  # a conditional constraint lets other rows through
    return "+".join(_strings(keywords["fields"]))


def _strings(value: ast.expr) -> list[str]:
    if not isinstance(value, ast.List | ast.Tuple):
        return []
    names = [
        e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
    ]
    return names if names and len(names) == len(value.elts) else []

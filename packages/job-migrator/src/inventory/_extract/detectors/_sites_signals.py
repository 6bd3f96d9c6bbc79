"""Signal receivers: Django signals and blinker's (Flask and its extensions).

A receiver runs inside ``send()``, in the sender's thread: in a request when the sender
is one. Django: ``sig.connect(fn)``, ``@receiver(sig)``. blinker (``blinker.signal(name)``,
``Namespace().signal(name)``, ``Signal()``; Flask's ``flask.signals``, Flask-Login,
Flask-Principal, Flask-Security): ``sig.connect(fn, sender=...)``, ``@sig.connect``,
``@sig.connect_via(sender)`` and ``sig.connect_via(sender)(fn)``. ``connect_via`` is
blinker's alone; ``connect`` is taken for a signal's only with evidence that the object
is one (its type, the factory that made it, the library it comes from, the keywords
only a signal's ``connect`` takes).
"""

from __future__ import annotations

import ast

from inventory._extract._nodes import own_nodes
from inventory._extract._resolve import MODEL_LOADED, Resolver, public_name
from inventory._extract._scopes import BindingKind
from inventory._extract._source import SourceText
from inventory._extract._state import Candidate
from inventory._extract.detectors._site_common import CallSite, argument_node, candidate
from inventory._extract.detectors._targets import job_target
from inventory.models import Framework, Pattern

SIGNAL_TYPES = frozenset(
    {
        "django.dispatch.Signal",
        "django.dispatch.dispatcher.Signal",
        "django.db.models.signals.ModelSignal",
    }
)
BLINKER_TYPES = frozenset(
    {"blinker.Signal", "blinker.NamedSignal", "blinker.base.Signal", "blinker.base.NamedSignal"}
)
# Calls returning a blinker signal: ``signal(name)``, ``Namespace().signal(name)``.
BLINKER_FACTORIES = frozenset(
    {
        "blinker.signal",
        "blinker.base.signal",
        "blinker.Namespace.signal",
        "blinker.base.Namespace.signal",
        "blinker.WeakNamespace.signal",
        "blinker.base.WeakNamespace.signal",
        "flask.signals.Namespace.signal",
    }
)
# Libraries whose module-level lowercase objects connected to are blinker signals.
BLINKER_LIBRARIES = (
    "blinker.",
    "flask.",
    "flask_login.",
    "flask_principal.",
    "flask_security.",
    "flask_sqlalchemy.",
    "flask_mail.",
    "flask_user.",
)
# blinker's default namespace: "signal(name)" returns "the named signal, creating it if
# needed"; "the same signal is returned for the same name" (blinker.readthedocs.io, named
# signals), wherever it is asked for. A signal of a ``Namespace()`` is that namespace's.
DEFAULT_NAMESPACE = frozenset(
    {"blinker.signal", "blinker.base.signal", "blinker.default_namespace.signal"}
    | {"blinker.base.default_namespace.signal"}
)
# How the scan names a signal of the default namespace, by its name: ``NAMED + "done"``.
NAMED = "blinker.signal:"
RECEIVER_DECORATORS = frozenset({"django.dispatch.receiver", "django.dispatch.dispatcher.receiver"})
# Django signals sent by tests, ``manage.py migrate`` or at import: framework lifecycle
# hooks, never request-path work (moving "create permissions after migrate" to a worker
# would break migrate).
LIFECYCLE_SIGNALS = frozenset({"setting_changed", "pre_migrate", "post_migrate", "class_prepared"})
# Signals of libraries that fire outside the request path (inside the Celery worker).
_WORKER_SIGNALS = ("celery.", "kombu.", "billiard.", "gunicorn.")
_NOT_DJANGO_SIGNALS = (*_WORKER_SIGNALS, "blinker.", "flask.")
# Keywords of a signal's ``connect`` alone (blinker and Django): not a socket's or a DB's.
_SIGNAL_KEYWORDS = frozenset({"weak", "dispatch_uid"})
_SIGNAL_PROJECTS = (Framework.DJANGO, Framework.FLASK)
_SENDS = frozenset({"send", "send_async", "send_robust"})


def signal_connect(call: CallSite) -> Candidate | None:
    """``sig.connect(fn)`` and ``sig.connect_via(sender)(fn)``."""
    node = call.node
    if isinstance(node.func, ast.Call):
        return _connect_via_call(call)
    if call.method != "connect":
        return None
    head = call.target.removesuffix(".connect")
    if head.rpartition(".")[2] in LIFECYCLE_SIGNALS or head.startswith(_WORKER_SIGNALS):
        return None
    target_node = argument_node(node, 0, "receiver")
    if target_node is None:
        return None
    to_confirm = False
    if not _connected_signal(call, target_node):
        to_confirm = _unconfirmed_connect(call, target_node)
        if not to_confirm:
            return None
    if _vetoing_receiver(call, target_node):
        return None  # connect(check_quota): it only checks and raises, in the sender
    if _forwards(target_node, call):
        return None  # connect(other.send): the other signal's receivers are the sites
    text = call.state.resolver.text
    detail = f"connected to {call.resolved.receiver_source}{_sender(node, text, 1)}"
    job = job_target(target_node, call.state.resolver)
    found = candidate(Pattern.SIGNAL_RECEIVER, node, job, call, [], detail)
    if isinstance(node.func, ast.Attribute):
        found.site.signals = signal_names(node.func.value, call.state.resolver)
    found.site.sender = sender_name(argument_node(node, 1, "sender"), call.state.resolver)
    found.site.signal_to_confirm = to_confirm
    return found


def _unconfirmed_connect(call: CallSite, receiver: ast.expr) -> bool:
    """``order_paid.connect(audit)`` outside a Django or Flask file: an imported object
    connected to one of this file's functions (blinker's ``connect(receiver, sender=ANY,
    weak=True)``), left for the classifier to confirm as a signal."""
    func = call.node.func
    if not isinstance(func, ast.Attribute) or not isinstance(receiver, ast.Name):
        return False
    found = call.state.resolver.scope.lookup(receiver.id)
    if found is None or found.kind is not BindingKind.FUNCTION:
        return False
    return imported_object(func.value, call.state.resolver)


def _connect_via_call(call: CallSite) -> Candidate | None:
    """``sig.connect_via(app)(on_login)``: the decorator applied by hand."""
    node = call.node
    inner = node.func
    assert isinstance(inner, ast.Call)
    via = inner.func
    if not isinstance(via, ast.Attribute) or via.attr != "connect_via" or len(node.args) != 1:
        return None
    resolver = call.state.resolver
    text = resolver.text
    detail = f"connected to {text.segment(via.value)}{_sender(inner, text, 0)}"
    job = job_target(node.args[0], resolver)
    found = candidate(Pattern.SIGNAL_RECEIVER, node, job, call, [], detail)
    found.site.signals = signal_names(via.value, resolver)
    found.site.sender = sender_name(argument_node(inner, 0, "sender"), resolver)
    return found


def sender_name(node: ast.expr | None, resolver: Resolver) -> str:
    """A receiver's ``sender=``: the class (or object) named, locally resolved; a model
    named ``"app.Model"`` as the index finds it; "" when there is none; "?" otherwise."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        app, _, model = node.value.rpartition(".")
        return (
            f"{MODEL_LOADED}{app}.{model}" if app.isidentifier() and model.isidentifier() else "?"
        )
    if isinstance(node, ast.Name | ast.Attribute):
        target = resolver.expr(node).target
        if target and not target.startswith("?"):
            return public_name(target, resolver.module)
    return "?"


def signal_names(node: ast.expr | None, resolver: Resolver) -> list[str]:
    """The signal objects ``node`` names (one, or a list or tuple of them), locally
    resolved: what a receiver connected to them is run by (``sig.send(...)``)."""
    if node is None:
        return []
    nodes = node.elts if isinstance(node, ast.List | ast.Tuple) else [node]
    found: list[str] = []
    for one in nodes:
        name = named_signal(one, resolver)
        if name is None and isinstance(one, ast.Name):
            # ``sig = signal("done")`` in the function, then ``sig.connect(f)``
            binding = resolver.expr(one).binding
            name = named_signal(binding.node, resolver) if binding is not None else None
        if name is not None:
            found.append(NAMED + name)  # ``@signal("done").connect``
        elif isinstance(one, ast.Name | ast.Attribute):
            target = resolver.expr(one).target
            if target and not target.startswith("?"):
                found.append(public_name(target, resolver.module))
            elif isinstance(one, ast.Name):
                # ``ns.signal("user-registered")`` bound to a module name: a value of no
                # known type, named as the module's own (as a send of it is).
                found.append(f"{resolver.module}.{one.id}")
    return found


def named_signal(node: ast.AST | None, resolver: Resolver) -> str | None:
    """The name in ``signal("done")`` (blinker's default namespace), else None."""
    if not isinstance(node, ast.Call) or resolver.dotted(node.func) not in DEFAULT_NAMESPACE:
        return None
    first = node.args[0] if node.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def named_signals(tree: ast.Module, resolver: Resolver) -> dict[str, str]:
    """``done = signal("done")`` at module level -> ``module.done``; ``self.sig =
    signal("x")`` in a method, or ``sig = signal("x")`` in a class body -> ``module.C.sig``:
    each a name for the default namespace's signal of that name."""
    module = resolver.module
    found: dict[str, str] = {}
    for stmt in tree.body:
        for target, name in _bound_signals(stmt, resolver):
            if isinstance(target, ast.Name):
                found[f"{module}.{target.id}"] = name
        if not isinstance(stmt, ast.ClassDef):
            continue
        for item in stmt.body:
            for target, name in _bound_signals(item, resolver):
                if isinstance(target, ast.Name):
                    found[f"{module}.{stmt.name}.{target.id}"] = name
            if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(item):
                for target, name in _bound_signals(inner, resolver):
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "self"
                    ):
                        found[f"{module}.{stmt.name}.{target.attr}"] = name
    return found


def _bound_signals(node: ast.AST, resolver: Resolver) -> list[tuple[ast.expr, str]]:
    if isinstance(node, ast.Assign):
        name = named_signal(node.value, resolver)
        return [(t, name) for t in node.targets] if name is not None else []
    if isinstance(node, ast.AnnAssign):
        name = named_signal(node.value, resolver)
        return [(node.target, name)] if name is not None else []
    return []


def _connected_signal(call: CallSite, receiver: ast.expr) -> bool:
    if call.receiver_type in SIGNAL_TYPES or call.receiver_type in BLINKER_TYPES:
        return True
    head = call.target.removesuffix(".connect")
    resolver = call.state.resolver
    if _blinker_head(head) or _made_by_factory(call, resolver):
        return True
    if any(k.arg in _SIGNAL_KEYWORDS for k in call.node.keywords):
        return not isinstance(receiver, ast.Constant)  # ``connect(make_logger(X), weak=False)``
    return _django_signal(call, head) or _imported_signal(call, receiver)


def _blinker_head(head: str) -> bool:
    """``flask_login.user_logged_in``, ``blinker.signal()`` (chained ``signal(n).connect``)."""
    if head.removesuffix("()") in BLINKER_FACTORIES:
        return True
    if not head.startswith(BLINKER_LIBRARIES):
        return False
    parts = head.split(".")
    return len(parts) >= 2 and all(p.isidentifier() and p.islower() for p in parts)


def _made_by_factory(call: CallSite, resolver: Resolver) -> bool:
    """``ready = signal("ready")`` / ``ns.signal("ready")`` bound in this file."""
    binding = call.resolved.binding
    if binding is None or binding.kind is not BindingKind.OTHER:
        return False
    node = binding.node
    return isinstance(node, ast.Call) and is_signal_factory(node, resolver)


def is_signal_factory(node: ast.Call, resolver: Resolver) -> bool:
    """A known factory, or any ``X.signal("literal name")`` (blinker's Namespace API)."""
    if resolver.expr(node.func).target in BLINKER_FACTORIES:
        return True
    named = isinstance(node.func, ast.Attribute) and node.func.attr == "signal"
    first = node.args[0] if node.args else None
    return named and isinstance(first, ast.Constant) and isinstance(first.value, str)


def _forwards(receiver: ast.expr, call: CallSite) -> bool:
    """``flask.signals.request_started.connect(request_started.send)``: one signal relayed
    to another (blinker, Django), whose own receivers are connected, and reported, apart."""
    if not isinstance(receiver, ast.Attribute) or receiver.attr not in _SENDS:
        return False
    resolver = call.state.resolver
    resolved = resolver.expr(receiver.value)
    if resolved.receiver_type in SIGNAL_TYPES or resolved.receiver_type in BLINKER_TYPES:
        return True
    return _signal_object(receiver.value, resolver, call.frameworks)


def _django_signal(call: CallSite, head: str) -> bool:
    if head.startswith(_NOT_DJANGO_SIGNALS):
        return False
    if head.startswith("django.") and ".signals." in head:
        return True
    # A project's own ``signals`` module, in a Django or Flask project.
    projects = any(f in call.frameworks for f in _SIGNAL_PROJECTS)
    return projects and ".signals." in head and not head.startswith("?")


def imported_object(node: ast.expr, resolver: Resolver) -> bool:
    """``order_paid`` in ``@order_paid.connect`` / ``order_paid.connect(fn)``: a lowercase
    name imported from another module, whose type this file cannot see. Taken for a blinker
    signal only once the classifier has read where it is made (``RawSite.signal_to_confirm``)."""
    if not isinstance(node, ast.Name) or not node.id.islower():
        return False
    binding = resolver.expr(node).binding
    if binding is None or binding.kind is not BindingKind.IMPORT:
        return False
    target = resolver.expr(node).target
    return not target.startswith((*_NOT_DJANGO_SIGNALS, "django.", "?"))


def _imported_signal(call: CallSite, receiver: ast.expr) -> bool:
    """``order_paid.connect(send_invoice)`` in a Django or Flask file, ``order_paid``
    imported from a project module (``shop.events``) and ``send_invoice`` a function of
    this file.

    The signal's type is in another file; a lowercase imported object connected to one of
    this file's functions is taken for a signal (a DB driver's ``connect(dsn)`` takes no
    function).
    """
    binding = call.resolved.binding
    if not any(f in call.frameworks for f in _SIGNAL_PROJECTS) or binding is None:
        return False
    if binding.kind is not BindingKind.IMPORT or not isinstance(call.node.func, ast.Attribute):
        return False
    if not isinstance(call.node.func.value, ast.Name):
        return False  # ``module.attr.connect``: handled by the ``.signals.`` rule
    head = call.target.removesuffix(".connect")
    if head.startswith((*_NOT_DJANGO_SIGNALS, "django.", "?")) or not head.islower():
        return False
    if not isinstance(receiver, ast.Name):
        return False
    found = call.state.resolver.scope.lookup(receiver.id)
    return found is not None and found.kind is BindingKind.FUNCTION


def _vetoing_receiver(call: CallSite, receiver: ast.expr) -> bool:
    """A function of this file that only inspects and raises (see :func:`only_vetoes`);
    one defined elsewhere is checked by the classifier, from its summary."""
    if not isinstance(receiver, ast.Name):
        return False
    found = call.state.resolver.scope.lookup(receiver.id)
    if found is None or found.kind is not BindingKind.FUNCTION:
        return False
    node = found.node
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    return only_vetoes(node) or only_imports(node)


def only_imports(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A receiver that only imports modules (``import app.tasks``, so that the tasks it
    defines register): registration plumbing, no work to move."""
    body = node.body[1:] if node.body and _docstring(node.body[0]) else node.body
    imports = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
    return bool(imports) and all(
        isinstance(s, ast.Import | ast.ImportFrom | ast.Pass) for s in body
    )


def _sender(node: ast.Call, text: SourceText, index: int) -> str:
    sender = argument_node(node, index, "sender")
    return f" (sender={text.segment(sender)})" if sender is not None else ""


def blinker_decorator(
    decorator: ast.expr, resolver: Resolver, frameworks: set[Framework]
) -> str | None:
    """``@sig.connect`` / ``@sig.connect_via(app)``: the detail of the receiver site, or None."""
    call = decorator if isinstance(decorator, ast.Call) else None
    func = call.func if call is not None else decorator
    if not isinstance(func, ast.Attribute):
        return None
    text = resolver.text
    if func.attr == "connect_via" and call is not None:
        return f"connected to {text.segment(func.value)}{_sender(call, text, 0)}"
    if func.attr != "connect" or call is not None:
        return None
    if resolver.expr(func).target.startswith(_WORKER_SIGNALS):
        return None  # ``@task_failure.connect``: Celery's, fired in the worker
    if not _signal_object(func.value, resolver, frameworks):
        return None
    return f"connected to {text.segment(func.value)}"


def _signal_object(node: ast.expr, resolver: Resolver, frameworks: set[Framework]) -> bool:
    """``ready`` in ``@ready.connect``: a blinker signal by type, factory or library, or
    an imported lowercase object in a Flask file (Django's ``connect`` returns None and
    cannot decorate)."""
    if isinstance(node, ast.Call):
        return is_signal_factory(node, resolver)
    resolved = resolver.expr(node)
    binding = resolved.binding
    if binding is not None and binding.kind is BindingKind.INSTANCE:
        return binding.target in BLINKER_TYPES
    if binding is not None and binding.kind is BindingKind.OTHER:
        return isinstance(binding.node, ast.Call) and is_signal_factory(binding.node, resolver)
    if _blinker_head(resolved.target):
        return True
    imported = binding is not None and binding.kind is BindingKind.IMPORT
    flask = Framework.FLASK in frameworks
    return imported and flask and resolved.target.rpartition(".")[2].islower()


def gives_value(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A ``return <value>`` (not ``None``) or a ``yield`` in the function's own body, not in a
    nested def, lambda or class."""
    for part in own_nodes(node):
        if isinstance(part, ast.Yield | ast.YieldFrom):
            return True
        if isinstance(part, ast.Return) and part.value is not None:
            value = part.value
            if not (isinstance(value, ast.Constant) and value.value is None):
                return True
    return False


def only_vetoes(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body that only inspects and raises: ``if is_blocked(user): raise ValidationError(...)``.

    Connected to a signal, such a receiver is a synchronous veto: ``send()`` runs it in
    the sender, which gets the exception at once (a form's ``clean``, a permission check);
    nothing is left to run later, so it is not a job. Only ``if`` / ``assert``, local
    names bound to a value, ``return`` / ``return None``, ``pass`` and ``raise`` are
    allowed, with at least one ``raise``: a call made as a statement, an attribute or
    item set, a loop, ``with``, ``try`` or ``global`` may be an effect.
    """
    body = node.body
    if body and _docstring(body[0]):
        body = body[1:]
    raises: list[bool] = []
    return _inspects(body, raises) and any(raises)


def _inspects(body: list[ast.stmt], raises: list[bool]) -> bool:
    for stmt in body:
        if isinstance(stmt, ast.Raise | ast.Assert):
            raises.append(True)
        elif isinstance(stmt, ast.If):
            if not (_inspects(stmt.body, raises) and _inspects(stmt.orelse, raises)):
                return False
        elif not _harmless(stmt):
            return False
    return True


def _harmless(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Return):
        # a value the sender collects is not a plain veto
        return stmt.value is None or _none(stmt.value)
    if isinstance(stmt, ast.Assign):
        return all(isinstance(t, ast.Name) for t in stmt.targets)
    if isinstance(stmt, ast.AnnAssign):
        return isinstance(stmt.target, ast.Name)
    return isinstance(stmt, ast.Pass)


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None

"""The walk over one module: calls, and the dispatch table that ties the mixins together."""

from __future__ import annotations

import ast

from inventory._extract._calls import call_info, typed_arguments
from inventory._extract._resolve import Resolved, Resolver, dotted_source
from inventory._extract._scopes import Scope, ScopeKind
from inventory._extract._source import SourceText
from inventory._extract._state import FunctionState, UseKind
from inventory._extract.detectors._handlers import framework_of
from inventory._extract.detectors._routes import route_of, unnamed_endpoint
from inventory._extract.detectors._site_common import CallSite
from inventory._extract.detectors._sites import detect, may_be_site, settle
from inventory._extract.detectors._sites_signals import named_signals
from inventory._extract.detectors._sites_threads import runs_a_server
from inventory._extract.values._facts import blocks, consumes, dispatch_fact
from inventory._extract.values._process_state import (
    CONTAINER_ADDS,
    CONTAINER_REMOVES,
    class_reads,
    module_containers,
    state_names,
)
from inventory._extract.values._request_reads import request_names
from inventory._extract.walker._prepass import gather_module
from inventory._extract.walker._walk_base import visitor
from inventory._extract.walker._walk_defs import DefsMixin
from inventory._extract.walker._walk_flow import FlowMixin
from inventory.models import Framework, Pattern
from inventory.summary import FileSummary, RawSite, TargetKind

# Calls that wait for futures or tasks passed to them.
WAIT_FUNCTIONS = frozenset(
    {
        "concurrent.futures.as_completed",
        "concurrent.futures.wait",
        "asyncio.gather",
        "asyncio.wait",
        "asyncio.as_completed",
        "asyncio.wait_for",
        "asyncio.shield",
    }
)
# Builtins that iterate their first argument to the end (so ``list(ex.map(...))`` waits).
_ITERATING_NAMES: tuple[str, ...] = ("list", "tuple", "set", "frozenset", "sorted", "sum", "dict")
_ITERATING_NAMES += ("any", "all", "max", "min")
ITERATING = frozenset(f"builtins.{name}" for name in _ITERATING_NAMES)
COLLECTING = frozenset({"append", "add", "extend", "appendleft"})
_DISCARDED = (UseKind.DISCARDED, UseKind.AWAITED_DISCARDED)
# Callbacks whose return value the caller documents it ignores: a future's done callback,
# the event loop's scheduled callbacks and signal handlers (docs.python.org, asyncio-future,
# asyncio-eventloop, concurrent.futures), by method name (the receiver is seldom typed),
# and ``atexit.register``, ``threading.Timer`` / ``Thread(target=)``, ``signal.signal``,
# ``weakref.finalize``, Django's ``transaction.on_commit``. A lambda given to one of them
# discards the value of its body.
_CALLBACK_METHODS = frozenset(
    {"add_done_callback", "call_soon", "call_soon_threadsafe", "call_later", "call_at"}
    | {"add_signal_handler", "add_reader", "add_writer"}
)
_CALLBACK_TAKERS = frozenset(
    {"atexit.register", "threading.Timer", "threading.Thread", "signal.signal"}
    | {"weakref.finalize", "django.db.transaction.on_commit"}
)
# ``next(it)`` / ``anext(it)`` without a default raise Stop(Async)Iteration at the end.
_ITERATOR_STEPS = frozenset({"next", "anext"})
# Spawns that leave the function running beside the caller: one running a service loop is
# the process's machinery (``inventory._classify._lifetime`` reads the same across modules).
_SPAWNED = (
    Pattern.THREAD,
    Pattern.PROCESS,
    Pattern.ASYNCIO_TASK,
    Pattern.EXECUTOR_SUBMIT,
    Pattern.RUN_IN_EXECUTOR,
)


class Walker(DefsMixin, FlowMixin):
    """Walks one module; ``run`` fills the summary it was given."""

    def __init__(self, tree: ast.Module, text: SourceText, summary: FileSummary) -> None:
        self.text, self.summary, self.module = text, summary, summary.module
        self.classes, self.consumers, self.uses = {}, set(), {}
        self.lambda_depth, self.sinks = 0, []
        self.routes: dict[str, Framework] = {}  # endpoint qualname -> framework
        self.handed: dict[str, dict[str, str]] = {}
        scope = Scope(ScopeKind.MODULE, summary.module)
        resolver = Resolver(summary.module, scope, self.classes, text)
        gather_module(tree, summary, scope, resolver)
        self.containers = module_containers(tree, resolver)
        self.class_nodes = {
            f"{summary.module}.{n.name}": n for n in tree.body if isinstance(n, ast.ClassDef)
        }
        self.top_classes = frozenset(n.name for n in self.class_nodes.values())
        self._class_reads: dict[str, frozenset[str]] = {}
        self.state_names = state_names(self.containers, text.lines, summary.imports)
        self.request_names = request_names(summary.imports)
        self.frameworks = {
            f for t in summary.imports.values() if (f := framework_of(t)) is not None
        }
        self.state = FunctionState(None, resolver, calls=summary.module_calls)

    def run(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            self.visit(stmt)
        summary = self.summary
        if any(v.startswith("blinker") for v in summary.imports.values()):
            summary.named_signals = named_signals(tree, self.state.resolver)
        summary.sites.extend(settle(self.state))
        summary.sites = [s for s in summary.sites if not self._runs_a_worker_loop(s)]
        self._apply_routes()
        summary.sites.sort(key=lambda s: (s.span.line, s.span.column))
        summary.functions.sort(key=lambda f: (f.span.line, f.span.column))

    def class_reads(self, qualname: str) -> frozenset[str]:
        """What the module's class ``qualname`` reads of itself (read once, when asked)."""
        found = self._class_reads.get(qualname)
        if found is None:
            node = self.class_nodes.get(qualname)
            found = class_reads(node) if node is not None else frozenset()
            self._class_reads[qualname] = found
        return found

    def _apply_routes(self) -> None:
        """Functions registered as endpoints by a call are handlers, and so are their sites."""
        for function in self.summary.functions:
            if function.handler is None:
                function.handler = self.routes.get(function.qualname)
        for site in self.summary.sites:
            if site.handler is None and site.enclosing_function is not None:
                site.handler = self.routes.get(site.enclosing_function)

    def _runs_a_worker_loop(self, site: RawSite) -> bool:
        """A thread or task running a server's, a queue's or a stop flag's loop is infrastructure,
        not a job."""
        if site.pattern not in _SPAWNED or site.target is None:
            return False
        if site.target_kind is TargetKind.THREAD_SUBCLASS:
            return f"{site.target}.run" in self.consumers
        return site.target in self.consumers

    def visit_call(self, node: ast.Call) -> None:
        state, func = self.state, node.func
        method = ""
        if isinstance(func, ast.Attribute):
            method = func.attr
            self._note_method(node, func)
        if self.lambda_depth:
            # Not the function's own call (the lambda runs when called, often later), but
            # work started in-process all the same when it is a spawn: ``add_done_callback(
            # lambda t: asyncio.create_task(cleanup(t)))`` is a site (its value is the
            # lambda's, so read as used unless the lambda is a callback whose value is
            # ignored: ``_CALLBACK_METHODS``).
            resolved = state.resolver.expr(func)
            self._discard_callback_values(node, method, resolved.target)
            if may_be_site(method, resolved.target):
                use = self.uses.get(id(node))
                site = CallSite(node, resolved, method, use, state, self.classes, self.frameworks)
                found = detect(site)
                if found is not None:
                    state.candidates.append(found)
            self.visit_children(node)
            return
        resolved = state.resolver.expr(func)
        use = self.uses.get(id(node))
        used = use is None or use.kind not in _DISCARDED
        chosen = self._chosen(node)
        infos = []
        for call in chosen or [node]:
            called = resolved if call is node else state.resolver.expr(call.func)
            info = call_info(call, called, used, self.module, self.text, state.handlers > 0)
            info.when_param = state.guard
            typed_arguments(call, state.resolver, self.module, info)
            infos.append(info)
        state.calls += infos
        self._discard_callback_values(node, method, resolved.target)
        self._note_call(node, resolved, method, dispatch=not chosen)
        if may_be_site(method, resolved.target) or isinstance(func, ast.Call):
            site = CallSite(node, resolved, method, use, state, self.classes, self.frameworks)
            found = detect(site)
            if found is not None:
                state.candidates.append(found)
        self.visit(func)
        if state.params:
            uses_param = self._visit_arguments(node)
            for info in infos:
                info.uses_param = uses_param
        else:
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                self.visit(arg)

    def _chosen(self, node: ast.Call) -> list[ast.Call]:
        """``log(msg)`` with ``log = partial(report, hass)``, ``write(path)`` with ``write =
        atomic if safe else plain``: the calls it makes (``report(hass, msg)``; ``atomic(path)``
        or ``plain(path)``), each placed where it is written, [] for any other call."""
        func = node.func
        if not isinstance(func, ast.Name):
            return []
        binding = self.state.resolver.scope.lookup(func.id)
        if binding is None or not binding.choices:
            return []
        return [
            ast.copy_location(
                ast.Call(
                    func=template.func,
                    args=[*template.args, *node.args],
                    keywords=[*template.keywords, *node.keywords],
                ),
                node,
            )
            for template in binding.choices
        ]

    def _discard_callback_values(self, node: ast.Call, method: str, target: str) -> None:
        """``task.add_done_callback(lambda t: asyncio.create_task(cleanup(t)))``: nothing reads
        what the lambda returns, so its body's value is discarded, not used."""
        if method not in _CALLBACK_METHODS and target not in _CALLBACK_TAKERS:
            return
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Lambda):
                self.mark(arg.body, UseKind.DISCARDED)

    def _note_call(
        self, node: ast.Call, resolved: Resolved, method: str, dispatch: bool = True
    ) -> None:
        """What a call tells beyond itself: dispatch facts (unless the callee was found
        through the name's value, ``dispatch=False``), consumer loops, waits."""
        state = self.state
        fact = dispatch_fact(node, resolved, state.params, self.text, state.resolver)
        if fact is not None and dispatch:
            state.facts.append(fact)
        if runs_a_server(node, resolved, method) and state.info is not None:
            state.consumer = True  # a wrapper around a server's accept loop: infrastructure
        if state.loops:
            # ``next(it)``, ``anext(it)``, a module's own ``anext`` shim; not ``x.next(t)``
            step = node.func.id if isinstance(node.func, ast.Name) else ""
            if step in _ITERATOR_STEPS and len(node.args) == 1 and not node.keywords:
                # ``while True: await anext(it)``: ends when the iterator does (StopIteration)
                state.loops[-1].broken = True
            if consumes(method, resolved):
                for loop in state.loops:
                    loop.consumes = True
            if blocks(method, resolved.target):
                for loop in state.loops:
                    loop.blocks = True
                    loop.paces = loop.paces or not state.handlers
        self._note_arguments(node, resolved.target, method)
        imports = self.summary.imports.values()
        route = route_of(node, resolved.target, state.resolver, imports, self.frameworks)
        if route is not None:
            if route.installs is not None:
                self.summary.installed[route.name] = route.installs.value
                return
            self.routes[route.name] = route.framework
            registered = self.summary.view_classes if route.view_class else self.summary.routes
            registered[route.name] = route.framework
            return
        gap = unnamed_endpoint(node, resolved.target, state.resolver, imports, state.qualname)
        if gap is not None:
            self.summary.sites.append(gap)

    def _visit_arguments(self, node: ast.Call) -> list[str]:
        """Visit the arguments, collecting the parameters they mention (see ``visit_name``)."""
        sink: set[str] = set()
        self.sinks.append(sink)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            self.visit(arg)
        self.sinks.pop()
        return sorted(sink)

    def _note_method(self, node: ast.Call, func: ast.Attribute) -> None:
        state, value = self.state, func.value
        if func.attr in CONTAINER_ADDS | CONTAINER_REMOVES and self._of_a_class(value):
            state.touches_state = True  # ``Registry.items.append(x)``: _process_state reads it
        if isinstance(value, ast.Call):
            self.mark(value, UseKind.RECEIVER, func.attr)
        elif state.watch:
            key = dotted_source(value)
            if key is not None and key in state.watch:
                state.method_uses[state.watch[key]].append((func.attr, node.lineno))

    def _note_arguments(self, node: ast.Call, target: str, method: str) -> None:
        args = node.args
        if not args:
            return
        if target in WAIT_FUNCTIONS:
            for arg in args:
                self._consume_expr(arg)
        elif target in ITERATING:
            self._iterate_arg(args[0])
        elif method in COLLECTING and isinstance(node.func, ast.Attribute):
            collection = dotted_source(node.func.value)
            if isinstance(args[0], ast.Call | ast.ListComp | ast.GeneratorExp):
                self._mark_bound(args[0], collection)
            elif isinstance(args[0], ast.Name) and collection is not None:
                self._collect(args[0].id, collection)

    def _collect(self, name: str, collection: str) -> None:
        """``pending.append(task)``: waiting for ``pending`` waits for the task too."""
        bound = self.state.watch.get(name)
        if bound is not None:
            self.state.watch.setdefault(collection, bound)

    def _consume_expr(self, arg: ast.expr) -> None:
        """Futures or tasks handed to gather/wait/as_completed, by name or written in place."""
        if isinstance(arg, ast.Starred):
            arg = arg.value
        if isinstance(arg, ast.Name):
            self.consume(arg.id)
        elif isinstance(arg, ast.Call):
            self.mark(arg, UseKind.WAITED)
        elif isinstance(arg, ast.List | ast.Tuple | ast.Set):
            for element in arg.elts:
                self._consume_expr(element)
        elif isinstance(arg, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            self._consume_expr(arg.elt)

    def _iterate_arg(self, arg: ast.expr) -> None:
        if isinstance(arg, ast.Call):
            self.mark(arg, UseKind.ITERATED)
        elif isinstance(arg, ast.Name) and arg.id in self.state.watch:
            self.state.iterated.add(self.state.watch[arg.id])


Walker.dispatch = dict(
    [
        visitor(ast.FunctionDef, Walker.visit_function),
        visitor(ast.AsyncFunctionDef, Walker.visit_function),
        visitor(ast.ClassDef, Walker.visit_class),
        visitor(ast.Call, Walker.visit_call),
        visitor(ast.Expr, Walker.visit_expr),
        visitor(ast.Await, Walker.visit_await),
        visitor(ast.Assign, Walker.visit_assign),
        visitor(ast.NamedExpr, Walker.visit_namedexpr),
        visitor(ast.AnnAssign, Walker.visit_annassign),
        visitor(ast.AugAssign, Walker.visit_augassign),
        visitor(ast.Delete, Walker.visit_delete),
        visitor(ast.Return, Walker.visit_return),
        visitor(ast.If, Walker.visit_if),
        visitor(ast.Try, Walker.visit_try),
        visitor(ast.TryStar, Walker.visit_try),
        visitor(ast.Match, Walker.visit_match),
        visitor(ast.For, Walker.visit_for),
        visitor(ast.AsyncFor, Walker.visit_for),
        visitor(ast.comprehension, Walker.visit_comprehension),
        visitor(ast.ListComp, Walker.visit_comprehension_expr),
        visitor(ast.SetComp, Walker.visit_comprehension_expr),
        visitor(ast.GeneratorExp, Walker.visit_comprehension_expr),
        visitor(ast.DictComp, Walker.visit_comprehension_expr),
        visitor(ast.While, Walker.visit_while),
        visitor(ast.Break, Walker.visit_break),
        visitor(ast.With, Walker.visit_with),
        visitor(ast.AsyncWith, Walker.visit_with),
        visitor(ast.Import, Walker.visit_import),
        visitor(ast.ImportFrom, Walker.visit_import),
        visitor(ast.Global, Walker.visit_global),
        visitor(ast.Nonlocal, Walker.visit_global),
        visitor(ast.Constant, Walker.visit_constant),
        visitor(ast.JoinedStr, Walker.visit_joinedstr),
        visitor(ast.BinOp, Walker.visit_binop),
        visitor(ast.Name, Walker.visit_name),
        visitor(ast.Lambda, Walker.visit_lambda),
    ]
)

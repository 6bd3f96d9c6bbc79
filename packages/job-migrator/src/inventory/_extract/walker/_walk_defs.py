"""Entering functions and classes: qualnames, parameters, decorators, handlers."""

from __future__ import annotations

import ast

from inventory._extract._nodes import falsy_defaults, none_defaults, walk
from inventory._extract._resolve import Resolver, public_name
from inventory._extract._scopes import (
    KEYWORDS,
    Binding,
    BindingKind,
    ClassCtx,
    Scope,
    ScopeKind,
)
from inventory._extract._source import span_of
from inventory._extract._state import FunctionState
from inventory._extract.detectors._guards import guards
from inventory._extract.detectors._handlers import (
    FormFamily,
    admin_class,
    class_view,
    foreign_view_base,
    form_class,
    function_handler,
    is_views_module,
    method_fields,
    template_node,
)
from inventory._extract.detectors._routes import class_route
from inventory._extract.detectors._sites import settle
from inventory._extract.detectors._sites_hooks import decorator_site
from inventory._extract.detectors._sites_signals import gives_value, only_vetoes
from inventory._extract.detectors._targets import yielded_callable
from inventory._extract.values._facts import unique_keys
from inventory._extract.values._process_state import ModuleOfState, process_state_facts
from inventory._extract.values._request_reads import request_read_facts
from inventory._extract.values._values import HELD, annotation_type, held_binding
from inventory._extract.walker._prepass import (
    class_attributes,
    form_model,
    held_parameters,
    many_to_many,
    returned_attributes,
    reverse_relations,
    thread_like,
    view_model,
)
from inventory._extract.walker._walk_base import WalkerBase
from inventory.models import Framework
from inventory.summary import ClassInfo, FactKind, FunctionInfo, ReceiverKind

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# A view's class attribute -> the parameter its instance is handed in as: Django's FormView
# calls ``form_valid(form)`` with ``get_form_class()(...)``, which is ``form_class`` unless
# overridden; DRF calls ``perform_create(serializer)`` with ``serializer_class(...)``.
_HANDED = {"form_class": "form", "serializer_class": "serializer"}
# Decorators whose application registers the function on the request being served.
REQUEST_HOOKS = frozenset(
    {"flask.after_this_request", "flask.ctx.after_this_request"}
    | {"quart.after_this_request", "quart.ctx.after_this_request"}
)


class DefsMixin(WalkerBase):
    def visit_function(self, node: FunctionNode) -> None:
        outer = self.state
        self._visit_signature(node)
        parent = outer.resolver.scope
        qualname = self._declare(parent, node.name, BindingKind.FUNCTION)
        decorators = [_decorator_name(d, outer.resolver) for d in node.decorator_list]
        self._applied_here(node, decorators)
        scope = parent.child(ScopeKind.FUNCTION, node.name)
        cls = self.classes.get(parent.prefix) if parent.kind is ScopeKind.CLASS else None
        params = _bind_params(node, scope, cls, decorators, outer.resolver)
        if cls is not None and cls.view:
            _bind_handed(node, scope, self.handed.get(cls.qualname, {}))
        info = self._function_info(node, qualname, params, decorators, cls)
        info.handler = self._handler(node, decorators, params, cls, parent)
        resolver = outer.resolver.child(scope)
        state = FunctionState(info, resolver, info.handler, frozenset(params), node=node)
        self._walk_body(node.body, state)
        info.calls, info.facts = state.calls, state.facts
        owner = cls.qualname if cls is not None else None
        if state.touches_state or state.globals:
            where = ModuleOfState(
                self.module, self.text, self.containers, self.top_classes, self.class_reads
            )
            info.facts += process_state_facts(node, resolver, where, owner)
        if state.reads_request:
            written = frozenset(f.target for f in info.facts if f.kind is FactKind.REQUEST_STATE)
            info.facts += request_read_facts(node, resolver, self.text, written, self.request_names)
        info.yields_callable = yielded_callable(node, decorators, resolver)
        self.summary.functions.append(info)
        if state.consumer or watches_first(node.body, params):
            self.consumers.add(qualname)
        self._decorator_sites(node, decorators, outer)

    def _applied_here(self, node: FunctionNode, decorators: list[str]) -> None:
        """``@after_this_request`` on a def inside a function is a call the enclosing function
        makes, ``after_this_request(fn)``, when the def runs: recorded as one (only for the
        decorators whose call acts on the request being served, ``REQUEST_HOOKS``)."""
        if self.state.info is None:
            return
        for written, name in zip(node.decorator_list, decorators, strict=True):
            if name in REQUEST_HOOKS and isinstance(written, ast.Name | ast.Attribute):
                call = ast.Call(func=written, args=[ast.Name(id=node.name)], keywords=[])
                self.visit(ast.fix_missing_locations(ast.copy_location(call, written)))

    def _declare(self, parent: Scope, name: str, kind: BindingKind) -> str:
        """The qualname of a def or class; inside a function it is also a local name."""
        qualname = f"{parent.prefix}.{name}"
        if parent.kind is ScopeKind.FUNCTION:
            parent.names[name] = Binding(kind, qualname)
        return qualname

    def _handler(
        self,
        node: FunctionNode,
        decorators: list[str],
        params: list[str],
        cls: ClassCtx | None,
        parent: Scope,
    ) -> Framework | None:
        top_level = parent.kind is ScopeKind.MODULE
        views = is_views_module(self.module)
        kinds = {d.rpartition(".")[2] for d in decorators}
        return function_handler(
            decorators,
            params,
            name=node.name,
            cls=cls,
            top_level=top_level,
            views_module=views,
            imported=self.frameworks,
            bound=cls is not None and not kinds & {"staticmethod", "classmethod"},
            foreign_base=cls is not None and foreign_view_base(cls.bases, self.classes),
        )

    def _visit_signature(self, node: FunctionNode) -> None:
        """What runs where the function is defined: decorators, defaults, annotations."""
        args = node.args
        params = [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]
        annotations = [p.annotation for p in params if p is not None] + [node.returns]
        for part in [*node.decorator_list, *args.defaults, *args.kw_defaults, *annotations]:
            if part is not None:
                self.visit(part)

    def _function_info(
        self,
        node: FunctionNode,
        qualname: str,
        params: list[str],
        decorators: list[str],
        cls: ClassCtx | None,
    ) -> FunctionInfo:
        return FunctionInfo(
            qualname=qualname,
            name=node.name,
            span=span_of(node),
            is_async=isinstance(node, ast.AsyncFunctionDef),
            is_method=cls is not None,
            class_name=cls.qualname.rpartition(".")[2] if cls else None,
            params=params,
            kwarg=node.args.kwarg.arg if node.args.kwarg else "",
            positional=len(node.args.posonlyargs) + len(node.args.args),
            falsy_defaults=falsy_defaults(node.args),
            none_defaults=none_defaults(node.args),
            decorators=[public_name(d, self.module) for d in decorators],
            decorator_sources=[self.text.segment(d) for d in node.decorator_list],
            source_hash=self.text.digest(node),
            vetoes=only_vetoes(node),
            returns_value=gives_value(node),
            guards=guards(node),
        )

    def _walk_body(self, body: list[ast.stmt], state: FunctionState) -> None:
        outer, self.state = self.state, state
        for stmt in body:
            self.visit(stmt)
        self.state = outer
        self.summary.sites.extend(settle(state))

    def _decorator_sites(
        self, node: FunctionNode, decorators: list[str], outer: FunctionState
    ) -> None:
        for decorator, dotted in zip(node.decorator_list, decorators, strict=True):
            site = decorator_site(decorator, dotted, node, outer, self.frameworks)
            if site is not None:
                self.summary.sites.append(site)

    def visit_class(self, node: ast.ClassDef) -> None:
        outer = self.state
        for child in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(child)
        parent = outer.resolver.scope
        qualname = self._declare(parent, node.name, BindingKind.CLASS)
        ctx = self._class_ctx(node, qualname, outer.resolver)
        self.classes[qualname] = ctx
        self._class_routes(node, qualname, outer.resolver)
        if ctx.view:
            self.handed[qualname] = _handed_classes(node, ctx, outer.resolver, self.handed)
        self.summary.classes.append(self._class_info(node, ctx))
        scope = parent.child(ScopeKind.CLASS, node.name)
        # The class body runs where the class is defined: its calls belong there.
        resolver = outer.resolver.child(scope)
        first = len(self.summary.functions)
        self._walk_body(node.body, FunctionState(None, resolver, calls=outer.calls))
        if ctx.view:
            _reached_helpers(qualname, self.summary.functions[first:])

    def _class_routes(self, node: ast.ClassDef, qualname: str, resolver: Resolver) -> None:
        """``@ns.route("/x")`` on a resource class: its HTTP-method handlers serve requests."""
        imports = self.summary.imports.values()
        for decorator in node.decorator_list:
            framework = class_route(decorator, resolver, imports)
            if framework is not None:
                self.summary.view_classes[qualname] = framework

    def _class_info(self, node: ast.ClassDef, ctx: ClassCtx) -> ClassInfo:
        # ``self.store = get_store()``: typed by the index (what get_store returns).
        attributes = {**returned_attributes(node, self.state.resolver), **ctx.attributes}
        model = form_model(node, self.state.resolver)
        viewed = view_model(node, self.state.resolver)
        return ClassInfo(
            qualname=ctx.qualname,
            name=node.name,
            span=span_of(node),
            bases=[public_name(b, self.module) for b in ctx.bases],
            methods=sorted(ctx.methods),
            attributes={k: public_name(v, self.module) for k, v in attributes.items()},
            held_parameters=held_parameters(node, ctx.qualname),
            unique_keys=unique_keys(node),
            form_model=public_name(model, self.module) if model else "",
            view_model=public_name(viewed, self.module) if viewed else "",
            inlines=[public_name(i, self.module) for i in _inlines(node, ctx, self.state.resolver)],
            related={
                k: public_name(v, self.module)
                for k, v in reverse_relations(node, ctx.qualname, self.state.resolver).items()
            },
            many={
                k: public_name(v, self.module)
                for k, v in many_to_many(node, ctx.qualname, self.state.resolver).items()
            },
        )

    def _class_ctx(self, node: ast.ClassDef, qualname: str, resolver: Resolver) -> ClassCtx:
        bases = [name for b in node.bases for name in _base_names(b, resolver)]
        methods = frozenset(s.name for s in node.body if isinstance(s, _DEFS))
        ctx = ClassCtx(qualname, bases, class_attributes(node, resolver, qualname), methods)
        ctx.thread_like = thread_like(bases, self.classes)
        ctx.external_bases = any(b not in self.classes and b != "builtins.object" for b in bases)
        ctx.view = class_view(bases, self.classes)
        ctx.admin = admin_class(bases, self.classes)
        ctx.form = form_class(bases, self.classes)
        if ctx.form == FormFamily.DRF:
            ctx.method_fields = method_fields(node.body, resolver.dotted)
        ctx.template_node = template_node(bases, self.classes)
        if ctx.admin:
            ctx.admin_actions = self._admin_actions(node, resolver)
        return ctx

    def _admin_actions(self, node: ast.ClassDef, resolver: Resolver) -> frozenset[str]:
        """``actions = [notify, "mark_shipped"]``: functions run by the admin's changelist POST.

        Named methods become handlers through the class; functions are registered like routes.
        """
        names: set[str] = set()
        for stmt in node.body:
            if not (
                isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "actions" for t in stmt.targets)
                and isinstance(stmt.value, ast.List | ast.Tuple)
            ):
                continue
            for element in stmt.value.elts:
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    names.add(element.value)
                elif (dotted := resolver.dotted(element)) is not None:
                    self.routes[dotted] = Framework.DJANGO
        return frozenset(names)


def _inlines(node: ast.ClassDef, ctx: ClassCtx, resolver: Resolver) -> list[str]:
    """``inlines = [PhotoInline, ...]`` in a ModelAdmin's body, each name resolved."""
    if not ctx.admin:
        return []
    found: list[str] = []
    for stmt in node.body:
        if (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "inlines" for t in stmt.targets)
            and isinstance(stmt.value, ast.List | ast.Tuple)
        ):
            found = [d for e in stmt.value.elts if (d := resolver.dotted(e)) is not None]
    return found


def _reached_helpers(cls: str, defined: list[FunctionInfo]) -> None:
    """Methods a view's handlers call on ``self`` (``post`` -> ``submit`` -> ``_charge``)
    run inside the same request: they are handlers too, so slow work they do inline is
    reported where it happens. Methods no handler calls are left alone."""
    methods = {f.qualname: f for f in defined if f.qualname.rpartition(".")[0] == cls}
    todo = [f for f in methods.values() if f.handler is not None]
    while todo:
        caller = todo.pop()
        for call in caller.calls:
            callee = methods.get(call.target)
            if callee is not None and callee.handler is None and call.receiver is ReceiverKind.SELF:
                callee.handler = caller.handler
                todo.append(callee)


def _handed_classes(
    node: ast.ClassDef, ctx: ClassCtx, resolver: Resolver, known: dict[str, dict[str, str]]
) -> dict[str, str]:
    """``form_class = SignupForm`` in a view's body (or a view of this file it derives from)."""
    found: dict[str, str] = {}
    for base in reversed(ctx.bases):
        found.update(known.get(base, {}))
    for stmt in node.body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        param = _HANDED.get(target.id) if isinstance(target, ast.Name) else None
        dotted = resolver.dotted(stmt.value) if param else None
        if param and dotted:
            found[param] = dotted
    return found


def _bind_handed(node: FunctionNode, scope: Scope, handed: dict[str, str]) -> None:
    """An unannotated ``form`` / ``serializer`` parameter of a view method: the view's class."""
    for param in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
        dotted = handed.get(param.arg)
        if dotted and param.annotation is None:
            scope.names[param.arg] = Binding(BindingKind.PARAM, dotted)


def _decorator_name(node: ast.expr, resolver: Resolver) -> str:
    return resolver.expr(node.func if isinstance(node, ast.Call) else node).target


def _base_names(node: ast.expr, resolver: Resolver) -> list[str]:
    """A class's base as written, or the two a Django ``Manager.from_queryset(QS)`` stands
    for: Django's docs, ``from_queryset()`` "returns a subclass of your base Manager with a
    copy of the custom QuerySet methods", so the queryset class comes first (its methods are
    the new class's own), then the manager class
    (``class M(BaseManager.from_queryset(RestrictedQS))``)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "from_queryset"
        and node.args
        and resolver.dotted(node.args[0])
        and resolver.dotted(node.func.value)
    ):
        return [_base_name(node.args[0], resolver), _base_name(node.func.value, resolver)]
    return [_base_name(node, resolver)]


def _base_name(node: ast.expr, resolver: Resolver) -> str:
    if isinstance(node, ast.Subscript):  # Generic[T], Base[Model]
        node = node.value
    return resolver.dotted(node) or resolver.text.segment(node)


def _bind_params(
    node: FunctionNode,
    scope: Scope,
    cls: ClassCtx | None,
    decorators: list[str],
    resolver: Resolver,
) -> list[str]:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    vararg = [args.vararg] if args.vararg else []
    kwarg = [args.kwarg] if args.kwarg else []
    every = [*positional, *vararg, *args.kwonlyargs, *kwarg]
    defaults = _called_defaults(node)
    for param in every:
        annotation = annotation_type(param.annotation, resolver)
        default = defaults.get(param.arg) if not annotation else None
        dotted = resolver.dotted(default) if default is not None else None
        binding = Binding(BindingKind.ALIAS, dotted) if dotted else None
        scope.names[param.arg] = binding or Binding(BindingKind.PARAM, annotation)
        held = held_binding(param.annotation, resolver) if param.annotation else None
        if held is not None:  # ``pages: list[Page]``: what iterating or indexing it gives
            scope.names[f"{param.arg}{HELD}"] = held
    if args.kwarg is not None and not annotation_type(args.kwarg.annotation, resolver):
        scope.names[args.kwarg.arg] = Binding(BindingKind.PARAM, param=KEYWORDS)
    kinds = {d.rpartition(".")[2] for d in decorators}
    if cls is not None and positional and "staticmethod" not in kinds:
        kind = BindingKind.CLS if "classmethod" in kinds else BindingKind.SELF
        scope.names[positional[0].arg] = Binding(kind, cls.qualname)
    return [param.arg for param in every]


def _called_defaults(node: FunctionNode) -> dict[str, ast.expr]:
    """Parameters the body calls whose default names a class or function
    (``def edit(request, form_class=FileForm)`` ... ``form_class(request.POST)``): a call
    through one runs the default unless a caller passes another, so it resolves to it."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [
        (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    named = {a.arg: d for a, d in pairs if isinstance(d, ast.Name | ast.Attribute)}
    if not named:
        return {}
    called = {
        n.func.id
        for n in walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in named
    }
    return {name: named[name] for name in called}


_WATCHES = frozenset({"wait", "join"})


def watches_first(body: list[ast.stmt], params: list[str]) -> bool:
    """The body starts (after its docstring) by blocking on a process or thread it was
    handed (``code = proc.wait()``): a thread running it is a watcher, not a job."""
    stmts = body[1:] if body and _docstring(body[0]) else body
    first = stmts[0] if stmts else None
    value = first.value if isinstance(first, ast.Assign | ast.Expr) else None
    if isinstance(value, ast.Await):
        value = value.value
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return False
    receiver = value.func.value
    waits = value.func.attr in _WATCHES and not value.args and not value.keywords
    return waits and isinstance(receiver, ast.Name) and receiver.id in params


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)

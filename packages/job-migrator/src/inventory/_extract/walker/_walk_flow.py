"""Statements: bindings, loops, with blocks, imports, and how values flow to their parents."""

from __future__ import annotations

import ast
from dataclasses import replace

from inventory._extract._imports import bindings_of
from inventory._extract._library import TASK, THREAD_FUTURE
from inventory._extract._nodes import falsy_defaults, own_nodes
from inventory._extract._resolve import Resolver, attribute_chain, capitalised, dotted_source
from inventory._extract._scopes import (
    KEYWORDS,
    SPREAD,
    Binding,
    BindingKind,
    ScopeKind,
    literal_keys,
)
from inventory._extract._source import span_of
from inventory._extract._state import FunctionState, Loop, Use, UseKind
from inventory._extract.values._facts import (
    augassign_fact,
    awaited_parameter_fact,
    forever,
    loop_fact,
    self_increment_fact,
    service_fact,
    service_loop,
    sql_fact,
    stream_fact,
    waits_in_test,
)
from inventory._extract.values._values import (
    ELEMENTS,
    HELD,
    ITEM,
    MAX_CHOICES,
    annotation_type,
    binding_for_value,
    callable_choices,
    elements_of,
    held_binding,
    held_binding_of,
    held_elements,
    parameter_rows,
    related_rows,
    returned_by,
    rows_of,
    union_type,
)
from inventory._extract.walker._walk_base import WalkerBase
from inventory.summary import NOT_NONE, ReceiverKind, Store

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp)
# What a parameter annotated so holds is work already started: a task runs on its loop, a
# future is completed by whoever made it.
_RUNNING = frozenset(
    {"asyncio.Task", "asyncio.tasks.Task", "asyncio.Future", "asyncio.futures.Future"}
    | {"concurrent.futures.Future", "concurrent.futures._base.Future"}
)


class FlowMixin(WalkerBase):
    def visit_expr(self, node: ast.Expr) -> None:
        value = node.value
        if isinstance(value, ast.Constant):
            return  # docstrings and bare strings
        if isinstance(value, ast.Call):
            self.mark(value, UseKind.DISCARDED)
        elif isinstance(value, ast.Await) and isinstance(value.value, ast.Call):
            self.mark(value.value, UseKind.AWAITED_DISCARDED)
        self.visit(value)

    def visit_await(self, node: ast.Await) -> None:
        inner = node.value
        if isinstance(inner, ast.Call):
            self.uses.setdefault(id(inner), Use(UseKind.AWAITED))
        elif isinstance(inner, ast.Name):
            self.consume(inner.id)
            if inner.id in self.state.params and not self._a_running_task(inner.id):
                # ``await coro`` of a parameter runs the coroutine the caller made: work
                # only the caller's argument names, a call through the parameter.
                self.state.facts.append(awaited_parameter_fact(node, inner.id, self.text))
        self.visit(inner)

    def _of_a_class(self, target: ast.expr) -> bool:
        """``cls.x``, ``self.__class__.x``, ``type(self).x``, ``Registry.x`` (a class of the
        module), or an item of one: an attribute of a class, which a write changes for the
        whole process."""
        if isinstance(target, ast.Subscript):
            target = target.value
        if not isinstance(target, ast.Attribute):
            return False
        head = target.value
        if isinstance(head, ast.Name):
            return head.id == "cls" or head.id in self.top_classes
        if isinstance(head, ast.Attribute):
            return head.attr == "__class__"
        return (
            isinstance(head, ast.Call)
            and isinstance(head.func, ast.Name)
            and head.func.id == "type"
        )

    def _a_running_task(self, name: str) -> bool:
        """A parameter annotated as a task or a future (``task: asyncio.Task``): awaiting it
        waits for work already running on its own, it does not run it here."""
        binding = self.state.resolver.scope.lookup(name)
        if binding is None or binding.kind is not BindingKind.PARAM or not binding.target:
            return False
        return binding.target.partition("[")[0] in _RUNNING

    def visit_assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1:
            self._mark_bound(node.value, dotted_source(node.targets[0]))
            self._mark_stored(node.targets[0], node.value)
            self._alias_param(dotted_source(node.targets[0]), node.value)
        self.visit(node.value)
        fact = self_increment_fact(node, self.text, self.state.resolver)
        if fact is not None:
            self.state.facts.append(fact)
        for target in node.targets:
            self._note_store(target, node)
            self._bind(target, node.value)
            self.visit(target)

    def visit_delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._note_store(target, node)
            self.visit(target)

    def _note_store(self, target: ast.expr, node: ast.stmt) -> None:
        """``self.name = None`` / ``obj.items[k] = v`` / ``del obj.x`` (also inside a tuple
        target): the first change of each parameter's object, for ``FunctionInfo.stores``."""
        info = self.state.info
        if info is None:
            return
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._note_store(element, node)
            return
        if isinstance(target, ast.Starred):
            self._note_store(target.value, node)
            return
        if self._of_a_class(target):
            self.state.touches_state = True  # ``cls._cache = {}``: _process_state reads it
        param = self._stored_param(target)
        if not param:
            return
        if all(s.param != param for s in info.stores):
            text = self.text.segment(node)[:200]
            info.stores.append(Store(param=param, text=text, span=span_of(node)))

    def _stored_param(self, target: ast.expr) -> str:
        """The parameter whose object ``target`` (an attribute or item) is part of: the
        parameter itself, a local copy of it (``obj = instance``), or a value read from the
        ``**`` parameter (``kwargs["instance"]``); "" for anything else."""
        resolver = self.state.resolver
        node = target
        while isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
            key = resolver.keyword(node)
            if key:
                return key
        if node is target or not isinstance(node, ast.Name):
            return ""
        if node.id in self.state.params:
            return node.id
        binding = resolver.scope.lookup(node.id)
        if binding is None or binding.param == KEYWORDS:
            return ""
        return binding.param.partition(".")[0]

    def _alias_param(self, written: str | None, value: ast.expr) -> None:
        """``self.coro = coro``: a spawn of ``self.coro`` below hands on the parameter."""
        aliases = self.state.param_aliases
        if written is None or written in self.state.params:
            return
        if isinstance(value, ast.Name) and value.id in self.state.params:
            aliases[written] = value.id
        else:
            aliases.pop(written, None)  # rebound to something else

    def visit_namedexpr(self, node: ast.NamedExpr) -> None:
        """``if (order := Order.objects.first()):`` binds like an assignment."""
        self._mark_bound(node.value, node.target.id)
        self.visit(node.value)
        self._bind(node.target, node.value)

    def visit_annassign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._mark_bound(node.value, dotted_source(node.target))
            self.visit(node.value)
            self._note_store(node.target, node)
        if isinstance(node.target, ast.Name) and self.in_function:
            names = self.state.resolver.scope.names
            names[node.target.id] = self._annotated_binding(node)
            names.pop(f"{node.target.id}{ELEMENTS}", None)  # what it iterates: the annotation's
            held = held_binding(node.annotation, self.state.resolver)
            if held is not None:
                names[f"{node.target.id}{HELD}"] = held
        elif not self.in_function:
            self.visit(node.annotation)  # evaluated in module and class bodies only
        self.visit(node.target)

    def _annotated_binding(self, node: ast.AnnAssign) -> Binding:
        resolver = self.state.resolver
        binding = (
            binding_for_value(node.value, resolver)
            if node.value is not None
            else Binding(BindingKind.OTHER)
        )
        if binding.kind is BindingKind.OTHER:
            rtype = annotation_type(node.annotation, resolver)
            return Binding(BindingKind.INSTANCE, rtype) if rtype else binding
        return binding

    def visit_augassign(self, node: ast.AugAssign) -> None:
        fact = augassign_fact(node, self.state.globals, self.text)
        if fact is not None:
            self.state.facts.append(fact)
        self._note_store(node.target, node)
        self.visit(node.value)
        self.visit(node.target)

    def _mark_stored(self, target: ast.expr, value: ast.expr) -> None:
        container = dotted_source(target.value) if isinstance(target, ast.Subscript) else None
        if container is not None and isinstance(value, ast.Call):
            self.mark(value, UseKind.STORED, container)

    def _mark_bound(self, value: ast.expr, name: str | None) -> None:
        if name is None:
            return
        if isinstance(value, ast.Call):
            self.mark(value, UseKind.BOUND, name)
        elif isinstance(value, ast.Await) and isinstance(value.value, ast.Call):
            self.uses[id(value.value)] = Use(UseKind.BOUND, name, awaited=True)
        elif isinstance(value, _COMPREHENSIONS) and isinstance(value.elt, ast.Call):
            self.mark(value.elt, UseKind.BOUND, name)
        elif isinstance(value, ast.List | ast.Tuple | ast.Set):
            for element in value.elts:
                if isinstance(element, ast.Call):
                    self.mark(element, UseKind.BOUND, name)

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        # Module-level names were bound by the pre-pass to their final value, which is
        # what functions see when they run; class bodies only matter to themselves.
        if isinstance(target, ast.Tuple | ast.List):
            # Every name is unknown first: a value reading one of them (``a, b = b, a``) reads
            # it unknown, never as bound a moment ago in this statement.
            self._bind_unknown(target)
            for part, part_value in unpacked(target, value, self.state.resolver):
                self._bind(part, part_value)
            self._bind_waited(target, value)
            self._bind_items(target, value)
        elif not isinstance(target, ast.Name):
            self._bind_unknown(target)
            self._add_key(target)
        elif self.in_function and target.id not in self.state.globals:
            resolver = self.state.resolver
            binding = _either(value, resolver) or binding_for_value(value, resolver)
            if binding.kind is BindingKind.OTHER and not binding.param:
                binding = self._next_of(value) or binding
            # ``read = a if c else b`` / ``log = partial(f, x)``, bound by this statement only
            # (a later rebinding, in a loop or a branch, would make a read see another value)
            choices = callable_choices(value, resolver)
            if choices and binding.kind is BindingKind.OTHER and self.state.bound_once(target.id):
                binding = replace(binding, choices=choices)
            elif (
                binding.kind in _CALLABLE_KINDS
                and isinstance(value, ast.Name | ast.Attribute)
                and not self.state.bound_once(target.id)
            ):
                # ``func = charge_webhook`` in one branch of several: the callable as written,
                # so that where the branches meet the name is each of them (``_joined``)
                binding = replace(binding, choices=(ast.Call(func=value, args=[], keywords=[]),))
            resolver.scope.names[target.id] = binding
            keys = literal_keys(value)
            if keys is not None:  # ``kw = {"name": n}``, later ``Model(**kw)``
                resolver.scope.names[f"{target.id}{SPREAD}"] = Binding(
                    BindingKind.OTHER, ",".join(keys)
                )
            else:
                resolver.scope.names.pop(f"{target.id}{SPREAD}", None)
            inner = same_elements(value, resolver)
            element = self._element(inner) if inner is not None else made_elements(value, resolver)
            if element is not None:  # ``kids = sorted(Page.objects.all(), ...)``
                resolver.scope.names[f"{target.id}{ELEMENTS}"] = element
            else:
                resolver.scope.names.pop(f"{target.id}{ELEMENTS}", None)

    def _next_of(self, value: ast.expr) -> Binding | None:
        """``next(iter(rows))``, ``next((r for r in rows if r.ok), None)``, ``min(rows,
        key=...)``, ``random.choice(rows)``: an element of what is iterated (builtins.next:
        "Retrieve the next item from the iterator"; min/max: "Return the smallest item in an
        iterable"; random.choice: "Return a random element from the non-empty sequence"),
        or the default, which a call on fails before it does anything."""
        if not isinstance(value, ast.Call) or not value.args:
            return None
        if isinstance(value.args[0], ast.Starred):
            return None
        picks = _PICKS.get(self.state.resolver.expr(value.func).target)
        if picks is None or len(value.args) > picks[0]:
            return None
        if any(k.arg not in picks[1] for k in value.keywords):
            return None
        return self._element(value.args[0])

    def _bind_items(self, target: ast.Tuple | ast.List, value: ast.expr) -> None:
        """``query, conditions = cls._preprocess(...)`` with a function of this file whose
        every ``return`` is a tuple: each name holds what that position of it holds."""
        if isinstance(value, ast.Await):
            value = value.value  # ``a, b = await f()``: an async def's items, as annotated
        if not isinstance(value, ast.Call) or not self.in_function:
            return
        if any(isinstance(part, ast.Starred) for part in target.elts):
            return
        resolver = self.state.resolver
        resolved = resolver.expr(value.func)
        callee = resolved.target
        # A function of another module (or a method): what the index knows its items are,
        # as for ``pair()[0]``: ``"pkg.pair#0()"``, carried as the receiver's maker.
        later = returned_by(resolved).removesuffix("()")
        if later.startswith(f"{resolver.module}."):
            later = ""  # this file's: the pre-pass read its returns, an unknown item stays so
        for position, part in enumerate(target.elts):
            if not isinstance(part, ast.Name) or part.id in self.state.globals:
                continue
            item = resolver.returns.get(f"{callee}{ITEM}{position}")
            if item:
                resolver.scope.names[part.id] = Binding(BindingKind.INSTANCE, item)
            elif later and self._unknown_name(part.id):
                made = f"{later}{ITEM}{position}()"
                resolver.scope.names[part.id] = Binding(BindingKind.OTHER, made)

    def _unknown_name(self, name: str) -> bool:
        """Nothing is known of what ``name`` holds (``row, created = get_or_create()``
        binds a row already: that stays)."""
        found = self.state.resolver.scope.names.get(name)
        return found is None or (found.kind is BindingKind.OTHER and not found.target)

    def _add_key(self, target: ast.expr) -> None:
        """``kw["pk"] = x`` after ``kw = {...}``: the key joins the dict's known keys; any
        other key (not a literal) makes them unknown."""
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
            return
        names = self.state.resolver.scope.names
        spread = f"{target.value.id}{SPREAD}"
        known = names.get(spread)
        if known is None:
            return
        key = target.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            names[spread] = Binding(
                BindingKind.OTHER, ",".join(filter(None, [known.target, key.value]))
            )
        else:
            names.pop(spread, None)

    def _bind_waited(self, target: ast.Tuple | ast.List, value: ast.expr) -> None:
        """``done, pending = await asyncio.wait(tasks)``: two sets made by the call, of tasks
        (``concurrent.futures.wait``: of futures), so ``for t in pending: t.cancel()`` is a
        task's method."""
        element = waited(target, value, self.state.resolver)
        if not element or not self.in_function:
            return
        names = self.state.resolver.scope.names
        for part in target.elts:
            if isinstance(part, ast.Name) and part.id not in self.state.globals:
                names[part.id] = Binding(BindingKind.INSTANCE, "builtins.set")
                names[f"{part.id}{ELEMENTS}"] = Binding(BindingKind.INSTANCE, element)

    def _element_binding(self, iterable: ast.expr) -> Binding | None:
        """``for sig in [password_set, password_changed]``: the loop variable stands for
        elements of one kind: instances of one class, or objects of one module (the first
        element stands for all, so ``sig.connect(f)`` is seen as a connect to a signal)."""
        if not isinstance(iterable, ast.List | ast.Tuple) or not iterable.elts:
            return None
        scope = self.state.resolver.scope
        found: list[Binding] = []
        for element in iterable.elts:
            binding = scope.lookup(element.id) if isinstance(element, ast.Name) else None
            if binding is None:
                return None
            found.append(binding)
        kinds = {b.kind for b in found}
        if kinds == {BindingKind.INSTANCE} and len({b.target for b in found}) == 1:
            return found[0]
        modules = {b.target.rpartition(".")[0] for b in found}
        if kinds <= {BindingKind.IMPORT, BindingKind.ALIAS} and len(modules) == 1:
            return Binding(BindingKind.ALIAS, found[0].target)
        return None

    def _bind_unknown(self, target: ast.expr) -> None:
        if not self.in_function:
            return
        names = self.state.resolver.scope.names
        for element in target.elts if isinstance(target, ast.Tuple | ast.List) else [target]:
            if isinstance(element, ast.Name):
                names[element.id] = Binding(BindingKind.OTHER)
                names.pop(f"{element.id}{ELEMENTS}", None)

    def visit_return(self, node: ast.Return) -> None:
        for loop in self.state.loops:
            loop.broken = True  # a return leaves every loop of the function
        if node.value is not None:
            if isinstance(node.value, ast.Call):
                self.mark(node.value, UseKind.RETURNED)
            self.visit(node.value)

    def visit_if(self, node: ast.If) -> None:
        """``if isinstance(obj, Page):``: in the body, ``obj`` is a ``Page`` (as a type
        checker narrows it); after the ``if`` it is what it was, unless the body rebound it.
        In a function, each branch starts from the bindings before the ``if``, and where the
        paths meet a name is what each bound (:func:`_joined`)."""
        self.visit(node.test)
        in_function = self.in_function
        narrowed = narrowing(node.test, self.state.resolver) if in_function else {}
        names = self.state.resolver.scope.names
        start = dict(names) if in_function else None
        before = {name: names.get(name) for name in narrowed}
        names.update(narrowed)
        state = self.state
        outer_guard = state.guard
        state.guard = outer_guard or (_param_guard(node.test, state) if in_function else "")
        for stmt in node.body:
            self.visit(stmt)
        state.guard = outer_guard
        for name, binding in narrowed.items():
            if names.get(name) is binding:  # not rebound in the body
                previous = before[name]
                if previous is None:
                    names.pop(name, None)
                else:
                    names[name] = previous
        if start is None:
            for stmt in node.orelse:
                self.visit(stmt)
            return
        body = dict(names)
        names.clear()
        names.update(start)
        for stmt in node.orelse:
            self.visit(stmt)
        _join(names, start, body, _ends(node.body), bool(node.orelse) and _ends(node.orelse))
        if not state.guard and not node.orelse and _leaves_function(node.body):
            # ``if not p: return`` in the function's own body: what follows runs under ``p``
            # (``if p is None: return``: under ``p is not None``)
            state.guard = _early_exit_guard(node, state)

    def visit_try(self, node: ast.Try | ast.TryStar) -> None:
        """In a function, where the paths through a ``try`` meet a name is what each bound
        (:func:`_joined`): the body then the ``else``, and each handler, which starts from
        what the body may have bound before it raised (the bindings before the ``try`` or
        after the body: either); a path that returns, raises, breaks or continues reaches
        nothing after it. The ``finally`` runs after every path, from the joined bindings."""
        if not self.in_function:
            self.visit_children(node)
            return
        names = self.state.resolver.scope.names
        start = dict(names)
        for stmt in node.body:
            self.visit(stmt)
        after_body = dict(names)
        raised = dict(start)  # a handler's start: before the body, or after it
        _join(raised, start, after_body, False, False)
        for stmt in node.orelse:
            self.visit(stmt)
        ends = _ends(node.body) or _ends(node.orelse)
        for handler in node.handlers:
            path = dict(names)  # the body's path and the handlers before this one
            names.clear()
            names.update(raised)
            self.state.handlers += 1  # the calls of its body run only when the body raised
            self.visit(handler)  # its type, its ``as`` name, its body
            self.state.handlers -= 1
            handler_ends = _ends(handler.body)
            # the handler is written after: its binding of any other value is kept
            _join(names, start, path, ends, handler_ends)
            ends = ends and handler_ends
        for stmt in node.finalbody:
            self.visit(stmt)

    def visit_match(self, node: ast.Match) -> None:
        """In a function, each ``case`` starts from the bindings before the ``match``, and
        where the paths meet a name is what each bound (:func:`_joined`), the path where no
        case matched included unless a case always matches (``case _:``, ``case x:``)."""
        self.visit(node.subject)
        if not self.in_function:
            for case in node.cases:
                self.visit(case)
            return
        names = self.state.resolver.scope.names
        start = dict(names)
        paths: list[tuple[dict[str, Binding], bool]] = []
        if not any(_always(case) for case in node.cases):
            paths.append((start, False))
        for case in node.cases:
            names.clear()
            names.update(start)
            self.visit(case)  # its pattern's captures, its guard, its body
            paths.append((dict(names), _ends(case.body)))
        # the last written first: a later case's binding of any other value is kept
        last, ends = paths[-1]
        names.clear()
        names.update(last)
        for path, path_ends in reversed(paths[:-1]):
            _join(names, start, path, path_ends, ends)
            ends = ends and path_ends

    def visit_for(self, node: ast.For | ast.AsyncFor) -> None:
        stream = isinstance(node, ast.AsyncFor) and isinstance(node.iter, ast.Call)
        if stream and self.in_function and not self.state.loops:  # read a stream to its end
            self.state.facts.append(stream_fact(node, self.text))
        if stream and self.state.loops and self.state.loops[-1].forever:
            self.state.loops[-1].streams = True  # read again each round (``visit_while``)
        self._iterate(node.iter, node.target)
        before = len(self.state.calls)
        self.visit(node.iter)
        if isinstance(node.iter, ast.Call):
            # ``for entry in Feed(url):``: the loop runs what the call made, iterated
            self._mark_entered(node.iter, before, "async for" if stream else "for")
        self._bind_unknown(node.target)
        self._bind_element(node.iter, node.target)
        self.visit(node.target)
        self.state.loops.append(Loop(forever=False))
        for stmt in node.body:
            self.visit(stmt)
        self.state.loops.pop()
        for stmt in node.orelse:
            self.visit(stmt)

    def _bind_element(self, iterable: ast.expr, target: ast.expr) -> None:
        """The loop variable is an element of what is iterated, when its type is known;
        ``for i, row in enumerate(rows)``: ``row`` is an element of ``rows``."""
        resolver = self.state.resolver
        for part_iterable, part in paired(iterable, target, resolver):
            element = self._element(part_iterable)
            if element is not None and isinstance(part, ast.Name):
                resolver.scope.names[part.id] = element

    def _element(self, iterable: ast.expr, depth: int = 3) -> Binding | None:
        """What iterating ``iterable`` gives, when known: through ``list(x)``, ``sorted(x)``,
        ``x[a:b]``, ``[v for v in x if ...]`` and names bound to them, an element of ``x``."""
        resolver = self.state.resolver
        held = held_elements(iterable, resolver)
        kept = (
            resolver.scope.lookup(f"{iterable.id}{ELEMENTS}")
            if isinstance(iterable, ast.Name)
            else None
        )
        inner = same_elements(iterable, resolver) if depth else None
        return (
            kept
            or self._element_binding(iterable)
            or rows_of(iterable, resolver)
            or _related_rows(iterable, resolver)
            or (held_binding_of(held) if held else None)
            or elements_of(iterable, resolver)
            or (self._element(inner, depth - 1) if inner is not None else None)
            or _parameter_rows(iterable, resolver)
        )

    def visit_comprehension_expr(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        # Evaluation order, so loop variables are aliased before the element uses them.
        names = self.state.resolver.scope.names
        # A comprehension's variables are its own: the function's names of that spelling
        # are what they were once it is done.
        loop_names = [g.target.id for g in node.generators if isinstance(g.target, ast.Name)]
        saved = {name: names.get(name) for name in loop_names} if self.in_function else {}
        for generator in node.generators:
            self.visit(generator)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self.visit(part)
        for name, before in saved.items():
            if before is None:
                names.pop(name, None)
            else:
                names[name] = before

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._iterate(node.iter, node.target)
        self.visit(node.iter)
        if self.in_function:
            self._bind_element(node.iter, node.target)
        self.visit(node.target)
        for condition in node.ifs:
            self.visit(condition)

    def _iterate(self, iterable: ast.expr, target: ast.expr) -> None:
        """``for x in call()`` waits for the call's results; ``for f in futures`` aliases f."""
        if isinstance(iterable, ast.Call):
            self.mark(iterable, UseKind.ITERATED)
            return
        watch = self.state.watch
        if isinstance(iterable, ast.Name) and iterable.id in watch:
            bound = watch[iterable.id]
            self.state.iterated.add(bound)
            if isinstance(target, ast.Name):
                watch[target.id] = bound

    def visit_while(self, node: ast.While) -> None:
        self.visit(node.test)
        loop = Loop(forever=forever(node.test), service=service_loop(node.test, self.text))
        loop.blocks = waits_in_test(node.test)  # ``while not stop.wait(30)``: a heartbeat
        self.state.loops.append(loop)
        for stmt in node.body:
            self.visit(stmt)
        self.state.loops.pop()
        if loop.forever and loop.streams and not loop.paces:
            # ``while True: async for message in pubsub.listen():``, sleeping only to back off
            # after a failure: the stream is read again each time it ends, for good, so the
            # loop consumes it, as ``queue.get()`` would. A loop that also sleeps each round
            # (``async for page in fetch(): ...; await asyncio.sleep(60)``) polls instead.
            loop.consumes = True
        if loop.forever and not loop.broken:
            self.state.facts.append(loop_fact(node, self.text))
        if loop.forever and loop.consumes:
            # A consumer loop, even one that stops on a sentinel: a worker, not a job. One
            # that breaks (drains a queue, then stops) returns: no service of the process.
            self.state.consumer = True
            if not loop.broken:
                self.state.facts.append(service_fact(node, self.text))
        elif loop.service and (loop.consumes or loop.blocks):
            # A flusher or scheduler loop on a stop flag, waiting each round: a service thread.
            self.state.consumer = True
            self.state.facts.append(service_fact(node, self.text))
        for stmt in node.orelse:
            self.visit(stmt)

    def visit_break(self, node: ast.Break) -> None:
        if self.state.loops:
            self.state.loops[-1].broken = True

    def visit_with(self, node: ast.With | ast.AsyncWith) -> None:
        statement = "async with" if isinstance(node, ast.AsyncWith) else "with"
        for item in node.items:
            self._enter(item, statement)
        for stmt in node.body:
            self.visit(stmt)

    def _enter(self, item: ast.withitem, statement: str) -> None:
        expr, var = item.context_expr, item.optional_vars
        if isinstance(expr, ast.Call) and isinstance(var, ast.Name):
            self.mark(expr, UseKind.WITH, var.id)
        before = len(self.state.calls)
        self.visit(expr)
        if isinstance(expr, ast.Call):
            # ``with Audit(order):``: the statement runs what the call made, entered and left
            self._mark_entered(expr, before, statement)
        if isinstance(var, ast.Name):
            binding = binding_for_value(expr, self.state.resolver)
            if binding.kind is BindingKind.INSTANCE:
                binding = Binding(BindingKind.INSTANCE, binding.target, binding.node, scoped=True)
            self.state.resolver.scope.names[var.id] = binding
        elif isinstance(expr, ast.Name):
            # ``with ex:`` waits for ex's work at block exit; only this function's ``ex``.
            names = self.state.resolver.scope.names
            found = names.get(expr.id)
            if found is not None and found.kind is BindingKind.INSTANCE:
                names[expr.id] = Binding(
                    BindingKind.INSTANCE, found.target, found.node, scoped=True
                )
        if var is not None:
            self.visit(var)

    def _mark_entered(self, call: ast.Call, before: int, statement: str) -> None:
        """The call recorded for ``call`` since ``before``: its result is what ``statement``
        (``with``, ``async with``, ``for``, ``async for``) enters or iterates."""
        where = span_of(call)
        for info in self.state.calls[before:]:
            if info.span == where:
                info.entered = statement

    def visit_import(self, node: ast.Import | ast.ImportFrom) -> None:
        scope = self.state.resolver.scope
        if scope.kind is ScopeKind.MODULE:
            return  # done by the pre-pass
        for local, target in bindings_of(node, self.summary.module, self.summary.is_package):
            if local == "*":
                self.summary.star_imports.append(target)
                continue
            scope.names[local] = Binding(BindingKind.IMPORT, target)
            self.summary.imports.setdefault(local, target)

    def visit_global(self, node: ast.Global | ast.Nonlocal) -> None:
        self.state.globals.update(node.names)

    def visit_constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            fact = sql_fact(node.value, node)
            if fact is not None:
                self.state.facts.append(fact)

    def visit_joinedstr(self, node: ast.JoinedStr) -> None:
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            fact = sql_fact(first.value, node)
            if fact is not None:
                self.state.facts.append(fact)
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                self.visit(value)

    def visit_binop(self, node: ast.BinOp) -> None:
        # Long ``a + b + c ...`` chains nest to the left, hundreds deep in generated code:
        # walk the spine with a loop, operands left to right as they are evaluated.
        spine = [node]
        while isinstance(spine[-1].left, ast.BinOp):
            spine.append(spine[-1].left)
        self.visit(spine[-1].left)
        for link in reversed(spine):
            self.visit(link.right)

    def visit_name(self, node: ast.Name) -> None:
        if node.id in self.state_names:
            self.state.touches_state = True
        if node.id in self.request_names:
            self.state.reads_request = True
        if self.sinks and node.id in self.state.params:
            for sink in self.sinks:
                sink.add(node.id)
        bound = self.state.watch.get(node.id)
        if bound is not None and isinstance(node.ctx, ast.Load):
            self.state.loads[bound].append(node.lineno)

    def visit_lambda(self, node: ast.Lambda) -> None:
        # A lambda's body runs when it is called, often later: its calls are not the function's.
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self.lambda_depth += 1
        self.visit(node.body)
        self.lambda_depth -= 1


def _either(value: ast.expr, resolver: Resolver) -> Binding | None:
    """``client = client or get_client()``: a default for a value of one type keeps the type,
    when every operand whose type is known has the same one. ``parent = self.category or
    self.project``, ``x = A() if c else B()``: when every operand's type is known, the value
    is one of them, their union (``None`` operands dropped: a call on None fails first)."""
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        operands = value.values
    elif isinstance(value, ast.IfExp):
        operands = [value.body, value.orelse]
    else:
        return None
    present = [o for o in operands if not (isinstance(o, ast.Constant) and o.value is None)]
    bindings = [binding_for_value(operand, resolver) for operand in present]
    typed = [b for b in bindings if b.kind in _TYPED_VALUES and b.target]
    if bindings and len(typed) == len(bindings):
        union = union_type([b.target for b in typed])
        if not union:
            return None
        orm = all(b.kind is BindingKind.ORM for b in typed)
        return Binding(BindingKind.ORM if orm else BindingKind.INSTANCE, union)
    if isinstance(value, ast.IfExp):
        return None  # an operand of unknown type: the value's type is unknown
    types = {b.target for b in bindings if b.kind is BindingKind.INSTANCE and b.target}
    return Binding(BindingKind.INSTANCE, types.pop()) if len(types) == 1 else None


_TYPED_VALUES = (BindingKind.INSTANCE, BindingKind.ORM)


def _parameter_rows(iterable: ast.expr, resolver: Resolver) -> Binding | None:
    rows = parameter_rows(iterable, resolver)
    return Binding(BindingKind.OTHER, param=rows) if rows else None


def _related_rows(iterable: ast.expr, resolver: Resolver) -> Binding | None:
    rows = related_rows(iterable, resolver)
    return Binding(BindingKind.ORM, rows) if rows else None


# Builtins that give one element of their first argument: (positional arguments at most,
# keywords allowed). ``max(a, b)`` (two positionals) compares its arguments: not these.
_PICKS = {
    "builtins.next": (2, frozenset()),
    "builtins.min": (1, frozenset({"key", "default"})),
    "builtins.max": (1, frozenset({"key", "default"})),
    "random.choice": (1, frozenset()),
}

# Builtins whose result iterates the same elements as their first argument.
_SAME_ELEMENTS = frozenset(
    f"builtins.{name}"
    for name in ("list", "tuple", "sorted", "reversed", "set", "frozenset", "iter")
)


def same_elements(node: ast.expr, resolver: Resolver) -> ast.expr | None:
    """The iterable whose elements ``node`` iterates: ``list(x)``, ``sorted(x, key=...)``,
    ``reversed(x)``, ``x[a:b]``, ``[v for v in x if ...]`` -> ``x``; None otherwise."""
    if isinstance(node, ast.Call):
        plain = node.args and not isinstance(node.args[0], ast.Starred)
        called = resolver.expr(node.func).target if plain else ""
        if called in _SAME_ELEMENTS:
            return node.args[0]
        if called == "builtins.filter" and len(node.args) == 2:
            return node.args[1]  # ``filter(None, rows)``: those elements of rows that pass
        return None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return node.value
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2:
        # ``for job in jobs or []``: jobs' elements, or none at all
        return node.values[0] if _empty(node.values[1], resolver) else None
    if (
        isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp)
        and len(node.generators) == 1
    ):
        generator = node.generators[0]
        target, element = generator.target, node.elt
        plain = isinstance(target, ast.Name) and isinstance(element, ast.Name)
        if plain and ast.unparse(target) == ast.unparse(element) and not generator.is_async:
            return generator.iter
    return None


_EMPTY_CALLS = frozenset({"builtins.list", "builtins.tuple", "builtins.set", "builtins.frozenset"})


def _empty(node: ast.expr, resolver: Resolver) -> bool:
    """``[]``, ``()``, ``set()``, ``list()``: an empty sequence (a dict iterates its keys)."""
    if isinstance(node, ast.List | ast.Tuple):
        return not node.elts
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        return resolver.expr(node.func).target in _EMPTY_CALLS
    return False


def made_elements(value: ast.expr, resolver: Resolver) -> Binding | None:
    """``[asyncio.create_task(fetch(u)) for u in urls]``, ``[pool.submit(f, a), pool.submit(f,
    b)]``: a list of what one kind of call returns, typed (a task, a future, a row) when the
    called name does not depend on the comprehension's variables."""
    if isinstance(value, ast.ListComp | ast.SetComp | ast.GeneratorExp):
        loop_names = {
            n.id for g in value.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
        }
        calls = [value.elt]
    elif isinstance(value, ast.List | ast.Tuple | ast.Set) and value.elts:
        loop_names, calls = set(), list(value.elts)
    else:
        return None
    found: set[str] = set()
    for call in calls:
        if not isinstance(call, ast.Call):
            return None
        root, _ = attribute_chain(call.func)
        if isinstance(root, ast.Name) and root.id in loop_names:
            return None
        binding = binding_for_value(call, resolver)
        if binding.kind is not BindingKind.INSTANCE or not binding.target:
            return None
        found.add(binding.target)
    return Binding(BindingKind.INSTANCE, found.pop()) if len(found) == 1 else None


def paired(
    iterable: ast.expr, target: ast.expr, resolver: Resolver
) -> list[tuple[ast.expr, ast.expr]]:
    """Which loop variable is an element of which iterable: ``for v in x`` -> ``[(x, v)]``;
    ``for i, v in enumerate(x)`` -> ``[(x, v)]``; ``for a, b in zip(x, y)`` -> ``[(x, a),
    (y, b)]``; ``for k, v in d.items()`` -> ``[(d.values(), v)]``."""
    if not isinstance(target, ast.Tuple | ast.List) or not isinstance(iterable, ast.Call):
        return [(iterable, target)]
    args, parts = iterable.args, target.elts
    if iterable.keywords or any(isinstance(a, ast.Starred) for a in args):
        return []
    func = iterable.func
    if isinstance(func, ast.Attribute) and func.attr == "items" and not args and len(parts) == 2:
        return [(method_call(func.value, "values", iterable), parts[1])]
    called = resolver.expr(func).target
    if called == "builtins.enumerate" and len(args) == 1 and len(parts) == 2:
        return [(args[0], parts[1])]
    if called == "builtins.zip" and len(args) == len(parts):
        return list(zip(args, parts, strict=True))
    return []


# Django's ``(object, created)`` pairs (QuerySet API reference): the object is a row.
_ROW_AND_FLAG = frozenset(
    {"get_or_create", "update_or_create", "aget_or_create", "aupdate_or_create"}
)


def unpacked(
    target: ast.Tuple | ast.List, value: ast.expr, resolver: Resolver
) -> list[tuple[ast.expr, ast.expr]]:
    """``a, b = A(), B()`` -> ``[(a, A()), (b, B())]``; ``row, created =
    Order.objects.get_or_create(...)`` -> ``[(row, Order.objects.get(...))]``, the row
    typed as a ``get`` of the same manager would be."""
    parts = target.elts
    if any(isinstance(p, ast.Starred) for p in parts):
        return []
    if isinstance(value, ast.Tuple | ast.List):
        values = value.elts
        plain = not any(isinstance(v, ast.Starred) for v in values)
        if len(values) == len(parts) and plain:
            return list(zip(parts, values, strict=True))
    call = value.value if isinstance(value, ast.Await) else value
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _ROW_AND_FLAG
        and len(parts) == 2
    ):
        return [(parts[0], method_call(call.func.value, "get", call))]
    return []


# What the wait functions return (asyncio-task.html, "Waiting Primitives": "Returns two
# sets of Tasks/Futures: (done, pending)"; concurrent.futures.html: "a named 2-tuple of
# sets", done and not_done, of the futures given).
_WAITS = {
    "asyncio.wait": TASK,
    "asyncio.tasks.wait": TASK,
    "concurrent.futures.wait": THREAD_FUTURE,
    "concurrent.futures._base.wait": THREAD_FUTURE,
}


def waited(target: ast.Tuple | ast.List, value: ast.expr, resolver: Resolver) -> str:
    """The class of the elements of both sets ``done, pending = [await] wait(...)`` binds;
    "" for any other statement."""
    call = value.value if isinstance(value, ast.Await) else value
    if len(target.elts) != 2 or not isinstance(call, ast.Call):
        return ""
    if any(isinstance(part, ast.Starred) for part in target.elts):
        return ""
    return _WAITS.get(resolver.expr(call.func).target, "")


def narrowing(test: ast.expr, resolver: Resolver) -> dict[str, Binding]:
    """``isinstance(obj, Page)`` (alone, or one operand of an ``and``): ``{"obj": Page}``,
    for one class of the project (its top-level package) named directly; a tuple of
    classes, or a library class, narrows nothing."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    found: dict[str, Binding] = {}
    for part in tests:
        if not (
            isinstance(part, ast.Call)
            and len(part.args) == 2
            and not part.keywords
            and isinstance(part.args[0], ast.Name)
            and isinstance(part.args[1], ast.Name | ast.Attribute)
            and resolver.expr(part.func).target == "builtins.isinstance"
        ):
            continue
        cls = resolver.expr(part.args[1])
        if cls.receiver is ReceiverKind.UNKNOWN or not capitalised(cls.target):
            continue
        if cls.target.partition(".")[0] != resolver.module.partition(".")[0]:
            continue  # a library class: its methods may be read by name (``?.json``) as is
        found[part.args[0].id] = Binding(BindingKind.INSTANCE, cls.target)
    return found


def method_call(receiver: ast.expr, method: str, like: ast.expr) -> ast.Call:
    """``receiver.method()``, made for reading a value's type (never written back), placed
    where ``like`` is so that anything reading its source text finds a place."""
    attribute = ast.copy_location(ast.Attribute(value=receiver, attr=method, ctx=ast.Load()), like)
    return ast.copy_location(ast.Call(func=attribute, args=[], keywords=[]), like)


_CALLABLE_KINDS = frozenset({BindingKind.FUNCTION, BindingKind.ALIAS, BindingKind.CALLABLE})
_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _join(
    names: dict[str, Binding],
    start: dict[str, Binding],
    body: dict[str, Binding],
    body_ends: bool,
    orelse_ends: bool,
) -> None:
    """After an ``if``: ``names`` holds what the ``else`` branch (or no branch) left, ``body``
    what the body left. A branch that returns, raises, breaks or continues reaches nothing
    after the ``if``. Where both reach and a name differs, see :func:`_joined`."""
    if body_ends and not orelse_ends:
        return  # only the else path (or the path around the body) goes on
    if orelse_ends and not body_ends:
        names.clear()
        names.update(body)
        return
    for name in body.keys() | names.keys():
        mine, theirs = body.get(name), names.get(name)
        if mine is theirs:
            continue
        rebound_here = theirs is not start.get(name)  # the else branch bound it
        joined = _joined(mine, theirs, rebound_here)
        if joined is None:
            names.pop(name, None)
        else:
            names[name] = joined


def _joined(body: Binding | None, orelse: Binding | None, orelse_bound: bool) -> Binding | None:
    """One name's binding after an ``if`` whose two paths bound it differently. Unbound on a
    path, or bound to ``None`` there (a call through it fails before doing anything): the
    other's. Either a callable (``writer = csv_writer`` in one branch, ``tsv_writer`` in the
    other): the value is only known at run time, never one of them picked by source order;
    a call through it follows each (:func:`_either_choice`), a spawn of it is dynamic
    (``detectors._targets._rebound``). Any other value: as the last binding in source order
    (the else branch's, if it bound the name, else the body's)."""
    if body is None or body.none:
        return orelse if orelse is not None and not orelse.none else body or orelse
    if orelse is None or orelse.none:
        return body
    if _callable(body) or _callable(orelse):
        if (body.kind, body.target, body.choices) == (orelse.kind, orelse.target, orelse.choices):
            return body
        return Binding(BindingKind.OTHER, choices=_either_choice(body, orelse))
    return orelse if orelse_bound else body


def _either_choice(body: Binding, orelse: Binding) -> tuple[ast.Call, ...]:
    """The calls a call through the name may make, when each path's callable is written out
    (``Binding.choices``): every one of them is followed, as for ``a if c else b``. () when
    one is not (a parameter, a lambda) or there are too many: the call is a dispatch."""
    if not body.choices or not orelse.choices:
        return ()
    found: dict[str, ast.Call] = {}
    for template in (*body.choices, *orelse.choices):
        found.setdefault(ast.dump(template), template)
    return tuple(found.values()) if len(found) <= MAX_CHOICES else ()


def _always(case: ast.match_case) -> bool:
    """``case _:`` or ``case name:`` without a guard: every subject matches it."""
    pattern = case.pattern
    return case.guard is None and isinstance(pattern, ast.MatchAs) and pattern.pattern is None


def _callable(binding: Binding) -> bool:
    return binding.kind in _CALLABLE_KINDS or bool(binding.choices)


def _leaves_function(body: list[ast.stmt]) -> bool:
    """The block's last statement returns or raises (a ``break`` leaves only its loop)."""
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise)


def _early_exit_guard(node: ast.If, state: FunctionState) -> str:
    """``if not p: return`` (or ``raise``) written in the function's own body, not in a
    nested block: the statements after it run only when ``p`` is true (:func:`_param_guard`
    of ``p``); else ""."""
    test = node.test
    fn = state.node
    if fn is None or not any(stmt is node for stmt in fn.body):
        return ""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _param_guard(test.operand, state) if isinstance(test.operand, ast.Name) else ""
    if _none_test(test, ast.Is):  # ``if p is None: return``
        assert isinstance(test, ast.Compare)
        named = _param_guard(test.left, state)
        return f"{named}{NOT_NONE}" if named else ""
    return ""


def _none_test(test: ast.expr, op: type[ast.cmpop]) -> bool:
    """``p is None`` (``op``: ``ast.Is``) or ``p is not None`` (``ast.IsNot``), ``p`` a name."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and len(test.ops) == 1
        and isinstance(test.ops[0], op)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


def _ends(body: list[ast.stmt]) -> bool:
    """The block leaves the code after it: its last statement returns, raises, breaks,
    continues, or is ``assert False``."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, _ENDS):
        return True
    return (
        isinstance(last, ast.Assert) and isinstance(last.test, ast.Constant) and not last.test.value
    )


def _param_guard(test: ast.expr, state: FunctionState) -> str:
    """``if p:`` on a parameter ``p`` the function never rebinds: the body runs only when
    the caller passed a true ``p`` (or its default is true): ``p``. ``if p is not None:``:
    ``p is not None``. Either may be one term of an ``and``. Else ""."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        # each term must hold: one guard is kept, one of a flag defaulting false first
        found = [g for g in (_param_guard(value, state) for value in test.values) if g]
        falsy = falsy_defaults(state.node.args) if found and state.node else []
        return next((g for g in found if g.partition(" ")[0] in falsy), found[0] if found else "")
    if _none_test(test, ast.IsNot):
        assert isinstance(test, ast.Compare)
        named = _param_guard(test.left, state)
        return f"{named}{NOT_NONE}" if named else ""
    if not isinstance(test, ast.Name) or test.id not in state.params or state.node is None:
        return ""
    rebound = any(
        isinstance(n, ast.Name) and n.id == test.id and isinstance(n.ctx, ast.Store | ast.Del)
        for n in own_nodes(state.node)
    )
    return "" if rebound else test.id

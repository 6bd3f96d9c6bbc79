"""What an assigned value or an annotation tells about a name."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from inventory._extract._library import (
    FACTORIES,
    FILE_OPENERS,
    FILE_TYPE,
    ITERATES,
    NARROWING,
    PATH_CLASSES,
    SESSION_CLASSES,
    SESSION_FACTORIES,
    STATEMENTS,
    statement_class,
    typed_method,
)
from inventory._extract._resolve import (
    CASTS,
    LOADED_CLASS,
    MODEL_LOADED,
    ORM_ROW,
    UNKNOWN_CALL,
    USER_MODEL,
    Resolved,
    Resolver,
    capitalised,
    extension_object,
    public_name,
    register_held,
)
from inventory._extract._scopes import Binding, BindingKind, Scope, ScopeKind
from inventory._extract.values._proxies import configured_class, picked_class, proxied
from inventory.summary import ReceiverKind

_ORM_SHORTCUTS = frozenset({"django.shortcuts.get_object_or_404"})
_SESSION_NAMES = frozenset({"session", "db", "db_session", "self.session", "self.db"})
# Literals and builtin constructors: a value of that builtin type, made right here.
LITERALS: dict[type[ast.expr], str] = {
    ast.Dict: "builtins.dict",
    ast.DictComp: "builtins.dict",
    ast.List: "builtins.list",
    ast.ListComp: "builtins.list",
    ast.Set: "builtins.set",
    ast.SetComp: "builtins.set",
    ast.Tuple: "builtins.tuple",
    ast.JoinedStr: "builtins.str",
}
_CONTAINERS = frozenset(
    f"builtins.{name}" for name in ("dict", "list", "set", "frozenset", "tuple", "bytearray")
) | frozenset(f"collections.{name}" for name in ("defaultdict", "OrderedDict", "Counter", "deque"))


_CONTAINER_NAMES = frozenset(c.rpartition(".")[2] for c in _CONTAINERS)


# ``x = a or b`` with a Category and b a Project: ``UNION + "pkg:Category|pkg:Project"`` (dots
# written ``:`` so the union is one segment of a dotted name); the index calls the method of
# every member (``inventory._classify._index.union_members``).
UNION = "__union__."
MAX_MEMBERS = 4


def union_type(types: list[str]) -> str:
    """The type of a value that is one of ``types`` (unions flattened, duplicates dropped):
    the one type when they agree, "" when one is unknown ("") or not a plain class name,
    or when there are more than ``MAX_MEMBERS``."""
    members: list[str] = []
    for found in types:
        if not found:
            return ""
        for member in union_parts(found):
            if any(mark in member for mark in ("()", "[]", "|", ":", "?")):
                return ""
            if member not in members:
                members.append(member)
    if not members or len(members) > MAX_MEMBERS:
        return ""
    if len(members) == 1:
        return members[0]
    return UNION + "|".join(m.replace(".", ":") for m in members)


def union_parts(found: str) -> list[str]:
    """The members of a union type, or the type itself."""
    if not found.startswith(UNION):
        return [found]
    return [m.replace(":", ".") for m in found[len(UNION) :].split("|")]


def binding_for_value(value: ast.expr, resolver: Resolver) -> Binding:
    """The binding ``name = value`` creates."""
    if isinstance(value, ast.Await):
        value = value.value
    if isinstance(value, ast.Constant) and value.value is None:
        return Binding(BindingKind.OTHER, none=True)
    keyword = resolver.keyword(value)
    if keyword:
        return Binding(BindingKind.OTHER, param=keyword)
    fresh = fresh_container(value, resolver)
    if fresh:
        return Binding(BindingKind.INSTANCE, fresh)
    table = resolver.table_lookup(value)
    if table:
        # ``exporter = EXPORTERS[k]``: one of the table's values (``Resolver.table_lookup``)
        return Binding(BindingKind.OTHER, table)
    held = held_value(value, resolver)
    if held:
        return held_binding_of(held)
    if isinstance(value, ast.Call):
        return _binding_for_call(value, resolver)
    if isinstance(value, ast.Lambda):
        return Binding(BindingKind.CALLABLE)
    if isinstance(value, ast.Name | ast.Attribute):
        return _binding_for_reference(value, resolver)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        # ``Path(folder) / name``: a child path, of the left operand's class (pathlib).
        left = binding_for_value(value.left, resolver)
        if left.kind is BindingKind.INSTANCE and left.target in PATH_CLASSES:
            return Binding(BindingKind.INSTANCE, left.target)
    registered = extension_object(value)  # ``current_app.extensions["mail"]``
    if registered:
        return Binding(BindingKind.INSTANCE, registered)
    return Binding(BindingKind.OTHER)


MAX_CHOICES = 4  # ``a if x else b if y else c``: at most this many callables followed


def callable_choices(value: ast.expr, resolver: Resolver) -> tuple[ast.Call, ...]:
    """What calling a local bound to ``value`` calls, as call templates (the callable and the
    arguments it is called with before the call's own), when that is known here:

    - ``log = partial(report, hass, domain)``: ``report`` with ``hass, domain`` first
      (functools.partial: calling it "behaves like func called with args and keywords",
      the call's positional arguments appended, its keywords extending the stored ones);
    - ``write = atomic if safe else plain``: one of the branches, each a named callable
      (a conditional expression evaluates to one of its operands).

    () for any other value, or when a callable is a name of unknown origin (a parameter, a
    local of unknown value): the call stays a dynamic dispatch. A method of an object of
    unknown type (``logger.debug``) is kept: called through the local, it is read as the
    call written out would be (the catalogue's receiver rules, or a gap naming it)."""
    if isinstance(value, ast.IfExp):
        branches = _branches(value)
        if not branches or len(branches) > MAX_CHOICES:
            return ()
        templates = tuple(ast.Call(func=b, args=[], keywords=[]) for b in branches)
    elif (
        isinstance(value, ast.Call)
        and value.args
        and isinstance(value.args[0], ast.Name | ast.Attribute)
        and resolver.expr(value.func).target == "functools.partial"
    ):
        template = ast.Call(func=value.args[0], args=value.args[1:], keywords=value.keywords)
        templates = (template,)
    else:
        return ()
    named = [t.func for t in templates if isinstance(t.func, ast.Name)]
    known = all(resolver.expr(n).receiver is not ReceiverKind.UNKNOWN for n in named)
    return templates if known else ()


def _branches(value: ast.expr) -> list[ast.Name | ast.Attribute]:
    """The operands a (nested) conditional expression may evaluate to, [] when one of them
    is anything but a name or an attribute (a call, a lambda, a literal)."""
    if isinstance(value, ast.IfExp):
        body, orelse = _branches(value.body), _branches(value.orelse)
        return [*body, *orelse] if body and orelse else []
    return [value] if isinstance(value, ast.Name | ast.Attribute) else []


def fresh_container(value: ast.expr, resolver: Resolver) -> str:
    """``seen = set()``, ``out = {}``, ``parts = []`` in a function body: a builtin value made
    by this very call of the function, so its methods change nothing a retry could see
    (``seen.add(x)``). Module and class level values outlive a job: they stay untyped here
    (a module-level set is typed by ``module_set``: its methods converge)."""
    if resolver.scope.kind is not ScopeKind.FUNCTION:
        return ""
    return made_container(value, resolver)


_SETS = frozenset({"builtins.set", "builtins.frozenset"})
PARTIALS = frozenset({"functools.partial", "functools.partialmethod"})


def module_set(value: ast.expr, resolver: Resolver) -> str:
    """``SEEN = set()``, ``KNOWN = {"a", "b"}``, ``frozenset(...)`` at module level: a set the
    process keeps. Its methods converge (``SEEN.add(x)`` twice is ``SEEN.add(x)`` once) and
    touch nothing outside the process, as ``SEEN: set[str] = set()`` says with an annotation.
    Lists and dicts are not typed so: a module-level list that grows is a buffer shipped
    later (``_classify._collectors``), a dict may be a registry of callables."""
    made = made_container(value, resolver)
    return made if made in _SETS else ""


def made_container(value: ast.expr, resolver: Resolver) -> str:
    """The builtin container a literal or a constructor call makes (``[]``, ``set()``,
    ``defaultdict(list)``), wherever it is; "" when ``value`` is none of them."""
    literal = LITERALS.get(type(value))
    if literal is not None:
        return literal
    if isinstance(value, ast.Constant) and isinstance(value.value, str | bytes):
        return f"builtins.{type(value.value).__name__}"
    func = value.func if isinstance(value, ast.Call) else None
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    if func is None or name not in _CONTAINER_NAMES:
        return ""
    target = resolver.expr(func).target
    return target if target in _CONTAINERS else ""


def _binding_for_reference(value: ast.Name | ast.Attribute, resolver: Resolver) -> Binding:
    """``x = y`` shares y's binding; ``x = self.client`` takes the attribute's type."""
    if isinstance(value, ast.Name):
        found = resolver.scope.lookup(value.id)
        if found is not None and found.kind is BindingKind.PARAM:
            # A local copy of a parameter: typed if the parameter is annotated.
            kind = BindingKind.INSTANCE if found.target else BindingKind.OTHER
            return Binding(kind, found.target, param=found.param or value.id)
        if found is not None:
            return found
    attribute_type = _self_attribute_type(value, resolver)
    if attribute_type:
        return Binding(BindingKind.INSTANCE, attribute_type)
    resolved = resolver.expr(value)
    if resolved.receiver in (ReceiverKind.NONE, ReceiverKind.MODULE, ReceiverKind.CLASS):
        return Binding(BindingKind.ALIAS, resolved.target)
    # ``group = owner.group`` with ``owner = kwargs["instance"]``: "instance.group"
    return Binding(BindingKind.OTHER, param=resolver.param_root(value))


def _self_attribute_type(value: ast.expr, resolver: Resolver) -> str:
    if not isinstance(value, ast.Attribute) or not isinstance(value.value, ast.Name):
        return ""
    owner = resolver.scope.lookup(value.value.id)
    if owner is None or owner.kind is not BindingKind.SELF:
        return ""
    cls = resolver.classes.get(owner.target)
    return cls.attributes.get(value.attr, "") if cls else ""


def _module_partial(
    call: ast.Call, target: str, resolver: Resolver
) -> ast.Name | ast.Attribute | None:
    """``f`` of ``name = partial(f, ...)`` at module level (a name or dotted name), else None.
    In a function body a local partial is left to the spawn detectors, which follow its
    arguments and every rebinding of the local (``detectors._targets``)."""
    if target not in PARTIALS or resolver.scope.kind is not ScopeKind.MODULE or not call.args:
        return None
    wrapped = call.args[0]
    return wrapped if isinstance(wrapped, ast.Name | ast.Attribute) else None


def _binding_for_call(call: ast.Call, resolver: Resolver) -> Binding:
    cast = _cast_type(call, resolver)
    if cast:  # ``page = cast(Page, obj)``: what the caller declares it is
        return Binding(BindingKind.INSTANCE, cast, call)
    manager = manager_class(call, resolver)
    if manager:
        return Binding(BindingKind.INSTANCE, manager, call)
    picked = (
        picked_class(call, resolver, union_type)
        or _loaded_then_called(call, resolver)
        or resolver.made_by_cls(call)  # ``x = cls(...)``: the class it is called on, or below
    )
    if picked:
        return Binding(BindingKind.INSTANCE, picked, call)
    resolved = resolver.expr(call.func)
    target = resolved.target
    wrapped = _module_partial(call, target, resolver)
    if wrapped is not None:
        # ``utcnow = partial(datetime.now, UTC)``: calling it calls what it wraps (functools:
        # "behaves like func called with args and keywords"), so the name is that callable.
        return _binding_for_reference(wrapped, resolver)
    session = _session_factory(call, target, resolver)
    if session:
        return Binding(BindingKind.ALIAS, session)
    if target in FACTORIES:
        return Binding(BindingKind.INSTANCE, FACTORIES[target], call)
    behind = proxied(call, target, resolver, binding_for_value)
    if behind:
        return Binding(BindingKind.INSTANCE, behind, call)
    loaded = (
        _class_loader(call, target) or configured_class(call, target) or loaded_model(call, target)
    )
    if loaded:
        return Binding(BindingKind.ALIAS, loaded)
    returned = resolver.returns.get(target)
    if returned:
        return Binding(BindingKind.INSTANCE, returned, call)
    handed = _narrowed(call, target, resolver)
    if handed:
        return Binding(BindingKind.INSTANCE, handed, call)
    if target in FILE_OPENERS or target == "?.open":  # open(...), path.open(...)
        return Binding(BindingKind.FILE, FILE_TYPE, call)
    model = orm_model(call, resolver, target)
    if model is not None:
        return Binding(BindingKind.ORM, model, call)
    related = _related_row(call, resolver)
    if related:  # ``child = self.children.filter(...).last()``: one row of the relation
        return Binding(BindingKind.ORM, related, call)
    rows = queryset_model(call, resolver)
    if rows and capitalised(rows):
        # ``qs = Order.objects.filter(...)``: a queryset of Order rows, typed as the helpers
        # returning one are (``Order.objects``), so ``qs.update(...)`` / ``qs.delete()`` read
        # as ``Order.objects.update`` / ``.delete`` and ``for order in qs`` gives Orders
        return Binding(BindingKind.INSTANCE, rows + _MANAGER, call)
    if resolved.receiver is not ReceiverKind.UNKNOWN and capitalised(target):
        return Binding(BindingKind.INSTANCE, target, call)
    made = returned_by(resolved) or _unknown_result(resolved)
    return Binding(BindingKind.OTHER, made, call, passed=_passed(call, resolver))


def _cast_type(call: ast.Call, resolver: Resolver) -> str:
    """``typing.cast(Page, obj)`` / ``cast("Page", obj)``: the declared class, "" otherwise."""
    if len(call.args) != 2 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return ""
    if resolver.expr(call.func).target not in CASTS:
        return ""
    return annotation_type(call.args[0], resolver)


def _session_factory(call: ast.Call, target: str, resolver: Resolver) -> str:
    """``Session = sessionmaker(engine)``: a configured factory that stands for the session
    class it makes (calling it makes one, ``begin()`` opens one); ``class_=AsyncSession`` or
    a project subclass names another. "" for any other call."""
    made = SESSION_FACTORIES.get(target, "")
    if not made:
        return ""
    given = next((k.value for k in call.keywords if k.arg == "class_"), None)
    named = resolver.dotted(given) if given is not None else None
    if named:
        return SESSION_CLASSES.get(named, named if capitalised(named) else made)
    return made


def _loaded_then_called(call: ast.Call, resolver: Resolver) -> str:
    """``import_string("pkg.Mailer")(app)``: an instance of the class the loader names."""
    if not isinstance(call.func, ast.Call):
        return ""
    target = resolver.expr(call.func.func).target
    loaded = _class_loader(call.func, target) or configured_class(call.func, target)
    return loaded if capitalised(loaded) else ""


def makes_class_named_at_run_time(nodes: Iterable[ast.AST], resolver: Resolver) -> bool:
    """Among a function's own ``nodes``, an instance of a class whose dotted path only the
    running app knows: ``import_string(settings.AXES_HANDLER)()`` (no literal, no literal
    default). What the function returns may then be any class, whatever its return
    annotation names (django-axes annotates ``-> AxesHandler``, a class of no-op methods,
    and returns the configured database handler, which is not even its subclass)."""
    for part in nodes:
        if not isinstance(part, ast.Call) or not isinstance(part.func, ast.Call):
            continue
        loader = part.func
        target = resolver.expr(loader.func).target
        if target.rpartition(".")[2] not in _PATH_LOADERS:
            continue
        if not (_class_loader(loader, target) or configured_class(loader, target)):
            return True
    return False


def _unknown_result(resolved: Resolved) -> str:
    """``change = obj.to_change()`` with ``obj`` of unknown type: ``"?.to_change()"``, so
    that ``change.save()`` carries which method made its receiver (``CallInfo.returned_from``):
    the index may know that every project method of that name returns a new instance."""
    method = resolved.target.removeprefix("?.")
    if resolved.receiver is not ReceiverKind.UNKNOWN or not resolved.target.startswith("?."):
        return ""
    if not method.isidentifier():
        return ""
    if resolved.returned and typed_method(method):
        # ``result = session.execute(q)`` with ``session`` made by ``factory()``: the index
        # types ``factory().execute()`` once it knows what factory makes.
        return f"{resolved.returned}.{method}()"
    return "" if resolved.target == UNKNOWN_CALL else f"?.{method}()"


_TYPED = (BindingKind.INSTANCE, BindingKind.ORM, BindingKind.PARAM)


def argument_type(node: ast.expr, resolver: Resolver) -> str:
    """An argument's class: a name's, a library call's result (``select(User).where(...)``,
    ``FACTORIES``), a function's result the file knows (``resolver.returns``). What a
    function of another module returns is deferred to the classifier as the name of the
    call (``pkg.f()``, ``pkg.f().where()`` after generative methods), followed by
    ``@i=type`` when a statement was handed to it (``q = f(q)``: ``f`` may return it)."""
    if isinstance(node, ast.Await):
        node = node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
        resolved = resolver.expr(node.func)
        target = resolved.target
        made = FACTORIES.get(target) or resolver.returns.get(target, "")
        return made or _deferred(returned_by(resolved), _passed(node, resolver))
    if not isinstance(node, ast.Name):
        return ""
    binding = resolver.scope.lookup(node.id)
    if binding is None:
        return ""
    if binding.kind in _TYPED:
        return binding.target
    if binding.kind is not BindingKind.OTHER:
        return ""
    return _deferred(binding.target, binding.passed)


def class_of(node: ast.expr, resolver: Resolver, module: str | None) -> str:
    """An argument's class (``argument_type``, statements by their kind): as the summary
    writes names when ``module`` is given (``public_name``), as resolved here (a builtin
    as ``builtins.str``) when it is None. ``self`` is of its method's class (or of a
    subclass: a callee treats it as that class, as a call on ``self`` does). "" when
    unknown."""
    if isinstance(node, ast.Name):
        binding = resolver.scope.lookup(node.id)
        if binding is not None and binding.kind is BindingKind.SELF:
            return _named(binding.target, module)
    found = statement_class(argument_type(node, resolver))
    call = node.value if isinstance(node, ast.Await) else node
    if (not found or "(" in found) and isinstance(call, ast.Call):
        made = resolver.expr(call.func)
        if made.binding is not None and made.binding.kind is BindingKind.CLASS:
            found = made.binding.target  # ``Slugger()``, a class of this file
        else:  # ``notify(Order.objects.get(pk=pk))``: the row's model
            found = orm_model(call, resolver, made.target) or found
    return _named(found, module)


def _named(name: str, module: str | None) -> str:
    return public_name(name, module) if name and module is not None else name


# ``pkg.f<narrows>`` in ``Resolver.returns``: the position of the argument that ``f``
# returns narrowed (``walker/_prepass._narrowed_parameter``).
NARROWS = "<narrows>"
# ``f#0`` in the resolver's returns: the class of the first item of the tuple ``f`` returns
# (``return query, conditions``), for ``query, conditions = f(...)``.
ITEM = "#"


def _narrowed(call: ast.Call, target: str, resolver: Resolver) -> str:
    """``query = cls.visible(query, actor)`` with ``visible`` of this file returning its
    ``query`` narrowed: the statement ``query`` held."""
    position = resolver.returns.get(f"{target}{NARROWS}")
    if position is None or int(position) >= len(call.args):
        return ""
    found = statement_class(argument_type(call.args[int(position)], resolver))
    return found if found in STATEMENTS else ""


HANDED = "@"  # ``pkg.f()@0=sqlalchemy.sql.Select``: no dotted or union name holds one


def _deferred(name: str, passed: str) -> str:
    """What a call of a named function returns; "" for a method of an object of unknown
    type (``?.m()``) or of a builtin."""
    if "()" not in name or name.startswith(("?", "builtins.")):
        return ""
    return f"{name}{HANDED}{passed}" if passed else name


def _passed(call: ast.Call, resolver: Resolver) -> str:
    """``f(q, ...)``: ``"0=sqlalchemy.sql.Select"``, the first argument holding a statement
    (or a value deferred as ``argument_type`` says); ``q.limit(n)`` on a ``q`` made so
    keeps what was handed (a generative method returns the same statement, narrowed)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in NARROWING:
        if isinstance(func.value, ast.Name):
            binding = resolver.scope.lookup(func.value.id)
            if binding is not None and binding.kind is BindingKind.OTHER:
                return binding.passed
        return ""
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Name | ast.Call | ast.Await):
            found = statement_class(argument_type(arg, resolver))
            if found in STATEMENTS or "()" in found:
                return f"{position}={found}"
    return ""


def returned_by(resolved: Resolved) -> str:
    """``session = get_session()``: ``"pkg.get_session()"``, what the function returns, whose
    type the index knows when the function's module does (its annotation, or the class
    every return builds), as for ``get_session().commit()``. "" for builtins and for
    callees of unknown type. The binding stays OTHER: the value's type is not known here,
    so ``session.commit()`` keeps the target ``?.commit`` and carries the callee aside
    (``CallInfo.returned_from``)."""
    target = resolved.target
    if resolved.receiver is ReceiverKind.UNKNOWN or not target or "()" in target:
        return ""
    return "" if target.startswith(("builtins.", "?")) else f"{target}()"


# Loaders of a class named by a dotted path: ``import_string("pkg.mail.Backend")``.
_PATH_LOADERS = frozenset({"import_string", "import_by_path", "locate"})


def _class_loader(call: ast.Call, target: str) -> str:
    """``import_string("pkg.backends.Mailer")`` (Django's and its look-alikes) is that
    name; ``get_class("checkout.mixins", "Mixin")`` (a loader taking a module label and a
    name, that a forked app may override at run time) is ``LOADED_CLASS + "checkout/mixins.Mixin"``,
    the class the index finds in the project module whose name ends with that label."""
    texts = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(texts) != len(call.args) or call.keywords:
        return ""
    name = target.rpartition(".")[2]
    if name == "import_module" and len(texts) == 1:  # ``import_module("sentry_sdk")``: that module
        return texts[0] if all(p.isidentifier() for p in texts[0].split(".")) else ""
    if name in _PATH_LOADERS and len(texts) == 1:
        parts = texts[0].split(".")
        return texts[0] if len(parts) > 1 and all(p.isidentifier() for p in parts) else ""
    if name == "get_class" and len(texts) == 2:
        label, cls = texts
        if cls.isidentifier() and all(p.isidentifier() for p in label.split(".")):
            return f"{LOADED_CLASS}{label.replace('.', '/')}.{cls}"
    return ""


# Queryset methods that return a queryset of the same model's rows (iterating gives instances).
_ROWS = frozenset(
    {"all", "filter", "exclude", "order_by", "select_related", "prefetch_related", "distinct"}
    | {"select_for_update", "using", "iterator", "only", "defer", "annotate", "reverse", "alias"}
    | {"none", "filter_by", "where"}
)


def rows_of(iterable: ast.expr, resolver: Resolver) -> Binding | None:
    """``for row in Model.objects.filter(...)`` (directly, or through ``qs = ...``): each
    ``row`` is an instance of the model, like ``Model.objects.get(...)`` gives one."""
    model = queryset_model(iterable, resolver)
    return Binding(BindingKind.ORM, model) if model else None


# What a helper returning a queryset of a model's rows is written as: the model's manager
# (``Tag.objects``), so that ``get_tags().update(...)`` reads as ``Tag.objects.update(...)``.
_MANAGER = ".objects"
_MANAGER_NAMES = frozenset({"objects", "_default_manager", "_base_manager"})
# ``self.__class__`` / ``type(self)`` (first parameter, class): in the pre-pass, where no
# function scope binds ``self``; ``cls`` of a classmethod comes with ``cls_param``.
Own = tuple[str, str, bool]  # (first parameter, class qualname, is a classmethod)


def queryset_model(
    node: ast.expr, resolver: Resolver, depth: int = 4, own: Own | None = None
) -> str:
    """The model of a queryset expression: ``Model.objects.filter(..)``, ``qs.iterator()``
    with ``qs = Model.objects.filter(..)`` earlier in the function, ``self.__class__.objects
    .filter(..)`` in a method (the method's class), ``qs = self.get_tags()`` with a helper
    returning a queryset. "" when unknown."""
    if isinstance(node, ast.Name) and depth:
        found = resolver.scope.lookup(node.id)
        if found is not None and found.kind is BindingKind.INSTANCE:
            return found.target.removesuffix(_MANAGER) if managed(found.target) else ""
        call = found.node if found is not None and found.kind is BindingKind.OTHER else None
        return queryset_model(call, resolver, depth - 1, own) if isinstance(call, ast.Call) else ""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return ""
    if node.func.attr not in _ROWS:
        return ""
    manager = node.func.value
    if isinstance(manager, ast.Attribute) and manager.attr in _MANAGER_NAMES:
        cls = _own_class(manager.value, resolver, own)
        if cls:
            return cls
    head = resolver.expr(node.func).target.rpartition(".")[0]
    if _MANAGER in head and not head.startswith("?"):
        return head.partition(_MANAGER)[0]
    if managed(head):
        return head.removesuffix(_MANAGER)
    return queryset_model(node.func.value, resolver, depth - 1, own) if depth else ""


def managed(target: str) -> bool:
    """``shop.Tag.objects``: what a helper returning a queryset of Tag rows is typed as."""
    return target.endswith(_MANAGER) and not target.startswith("?") and len(target) > 8


def _own_class(node: ast.expr, resolver: Resolver, own: Own | None) -> str:
    """``self.__class__``, ``type(self)``, ``cls`` in a method: the method's class (the
    subclass an instance really is derives from it, and shares its manager)."""
    name = ""
    by_name = False
    if isinstance(node, ast.Attribute) and node.attr == "__class__":
        name = node.value.id if isinstance(node.value, ast.Name) else ""
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
    ):
        name = node.args[0].id
    elif isinstance(node, ast.Name):
        name, by_name = node.id, True
    if not name:
        return ""
    if own is not None:
        param, cls, classmethod = own
        return cls if name == param and by_name == classmethod else ""
    binding = resolver.scope.lookup(name)
    if binding is None:
        return ""
    wanted = BindingKind.CLS if by_name else BindingKind.SELF
    return binding.target if binding.kind is wanted else ""


def elements_of(iterable: ast.expr, resolver: Resolver) -> Binding | None:
    """``for stat in self.iter_stats()``: what each element is, when the helper's return
    annotation says (``-> Iterator[Stat]``, ``list[Stat]``...), its yields build one class,
    or it returns a queryset (its model's instances). A helper of another module (or a
    method a base defines) gives ``"pkg.iter_stats()[]"``, for the index to type."""
    if isinstance(iterable, ast.Name):
        found = resolver.scope.lookup(iterable.id)
        if found is not None and found.kind is BindingKind.INSTANCE and managed(found.target):
            return Binding(BindingKind.ORM, found.target.removesuffix(_MANAGER))
        return None
    if not isinstance(iterable, ast.Call):
        return None
    resolved = resolver.expr(iterable.func)
    target = resolved.target
    if resolved.receiver is ReceiverKind.UNKNOWN or not target:
        return None
    element = resolver.returns.get(f"{target}{ELEMENT}") or ITERATES.get(target)
    if element:
        return Binding(BindingKind.INSTANCE, element)
    returned = resolver.returns.get(target, "")
    if managed(returned):
        return Binding(BindingKind.ORM, returned.removesuffix(_MANAGER))
    later = returned_by(resolved)
    return Binding(BindingKind.OTHER, f"{later}{ELEMENT}") if later and not returned else None


# ``pkg.f[]`` in ``Resolver.returns`` (``"f()[]"`` in the summary): what iterating f's result gives.
ELEMENT = "[]"
_ITERABLES = frozenset(
    {"Iterable", "Iterator", "Generator", "AsyncIterable", "AsyncIterator", "AsyncGenerator"}
    | {"list", "List", "Sequence", "MutableSequence", "Collection", "Reversible"}
    | {"set", "Set", "MutableSet", "AbstractSet", "frozenset", "FrozenSet", "deque", "Deque"}
    | {"tuple", "Tuple"}
)
_TYPING = ("builtins.", "typing.", "typing_extensions.", "collections.")


def type_args(node: ast.Subscript) -> list[ast.expr]:
    """``X[A, B]`` -> [A, B]; ``X[A]`` -> [A]; ``X[()]`` (``tuple[()]``, the empty tuple) -> []."""
    return list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]


def element_annotation(node: ast.expr | None, resolver: Resolver) -> str:
    """``-> Iterable[Stat]``, ``Iterator["Stat"]``, ``Generator[Stat, None, None]``,
    ``list[Stat | None]``, ``tuple[Stat, ...]``, ``Optional[list[Stat]]`` -> resolved Stat."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parsed = _parsed(node.value)
        return element_annotation(parsed, resolver) if parsed is not None else ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return element_annotation(node.left, resolver) or element_annotation(node.right, resolver)
    if not isinstance(node, ast.Subscript):
        return ""
    head = resolver.dotted(node.value) or ""
    last = head.rpartition(".")[2]
    args = type_args(node)
    if not args:
        return ""  # ``tuple[()]``: the empty tuple has no element
    if last in ("Optional", "Annotated") or head in _MAPPED:
        return element_annotation(args[0], resolver)
    if last not in _ITERABLES or not head.startswith(_TYPING):
        return ""
    if last in ("tuple", "Tuple") and len(args) != 1:
        ellipsis = isinstance(args[-1], ast.Constant) and args[-1].value is Ellipsis
        if len(args) != 2 or not ellipsis:
            return ""  # ``tuple[A, B]``: elements of different types
    return annotation_type(args[0], resolver)


def queryset_annotation(node: ast.expr | None, resolver: Resolver) -> str:
    """``-> QuerySet[Tag]`` (Django's, possibly a string): ``shop.Tag.objects``; "" otherwise
    (a bare ``-> QuerySet`` or a project queryset class is a plain return type)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        node = _parsed(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return queryset_annotation(node.left, resolver) or queryset_annotation(node.right, resolver)
    if not isinstance(node, ast.Subscript):
        return ""
    head = resolver.dotted(node.value) or ""
    if head.rpartition(".")[2] == "Optional":
        return queryset_annotation(node.slice, resolver)
    if not (head.startswith("django.") and head.endswith("QuerySet")):
        return ""
    args = type_args(node)
    model = annotation_type(args[0], resolver) if args else ""
    return f"{model}{_MANAGER}" if capitalised(model) and not model.startswith(_TYPING) else ""


def _parsed(text: str) -> ast.expr | None:
    try:
        return ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None


def manager_class(call: ast.Call, resolver: Resolver) -> str:
    """``objects = ArticleQuerySet.as_manager()``: the manager offers the queryset class's
    methods; ``objects = ArticleManager.from_queryset(ArticleQuerySet)()``: the manager
    class's (Django's two ways of building a custom manager). "" otherwise."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "as_manager" and not call.args:
        owner = resolver.dotted(func.value) or ""
        return owner if capitalised(owner) else ""
    inner = func.func if isinstance(func, ast.Call) else None
    if isinstance(inner, ast.Attribute) and inner.attr == "from_queryset":
        owner = resolver.dotted(inner.value) or ""
        return owner if capitalised(owner) else ""
    return ""


SWAPPER_LOADER = "swapper.load_model"


def loaded_model(call: ast.Call, target: str) -> str:
    """``get_model("offer", "Condition")``, ``apps.get_model("offer.Condition")``,
    ``get_user_model()``: Django's lookups of a model class by name (and the project
    wrappers named after them), as a name the index resolves to the model. "" otherwise."""
    name = target.rpartition(".")[2]
    if name == "get_user_model" and not call.args and not call.keywords:
        return MODEL_LOADED + USER_MODEL
    # swapper's ``load_model("app", "Model")`` is ``apps.get_model`` that honours a swapped
    # model setting (as ``get_user_model`` honours AUTH_USER_MODEL): the default model is read
    swapper = target == SWAPPER_LOADER
    if name != "get_model" and not swapper:
        return ""
    given = call.args if swapper else _get_model_arguments(call)
    if given is None or (swapper and len(given) != 2):
        return ""
    texts = [a.value for a in given if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(texts) != len(given) or not 1 <= len(texts) <= 2:
        return ""
    label = ".".join(texts) if len(texts) == 2 else texts[0]
    app, _, model = label.rpartition(".")
    if not (app.isidentifier() and model.isidentifier()):
        return ""
    return f"{MODEL_LOADED}{app}.{model}"


_GET_MODEL = ("app_label", "model_name")


def _get_model_arguments(call: ast.Call) -> list[ast.expr] | None:
    """``get_model``'s label and model name in order, given by position or by keyword
    (Django: ``Apps.get_model(app_label, model_name=None, require_ready=True)``:
    ``apps.get_model(app_label="events", model_name="StoredEventType")``); None for any
    other keyword or a splat."""
    named = {k.arg: k.value for k in call.keywords if k.arg != "require_ready"}
    if None in named or not set(named) <= set(_GET_MODEL[len(call.args) :]):
        return None  # ``**kw``, another keyword, or a label given twice
    given = list(call.args)
    for parameter in _GET_MODEL[len(given) :]:
        if parameter not in named:
            break
        given.append(named.pop(parameter))
    return None if named else given  # a model_name without its app_label


def orm_model(call: ast.Call, resolver: Resolver, target: str) -> str | None:
    """The model of ``X.objects.get(...)`` / ``...filter().first()`` / ``session.get(X, ..)``;
    "" when the call loads a row of an unknown model, None when it does not load one."""
    if target in _ORM_SHORTCUTS:
        return _model_from_arg(call, resolver)
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in ORM_ROW:
        return None
    head = target.rpartition(".")[0]
    if ".objects" in head and not head.startswith("?"):
        return head.partition(".objects")[0]
    receiver = resolver.text.segment(call.func.value)
    if "objects" in receiver or ".query(" in receiver:
        return ""
    if call.func.attr == "get" and (receiver in _SESSION_NAMES or receiver.endswith(".session")):
        return _model_from_arg(call, resolver)
    return None


def _model_from_arg(call: ast.Call, resolver: Resolver) -> str:
    if call.args and isinstance(call.args[0], ast.Name | ast.Attribute):
        return resolver.dotted(call.args[0]) or ""
    return ""


# Annotations that say nothing about the value: a receiver typed ``Any`` is untyped.
_UNTYPED = frozenset({"typing.Any", "typing_extensions.Any", "builtins.object"})
# Type qualifiers (PEP 526, 591, 593, 655, 705): ``x: Final = 3``, ``n: ClassVar[int]``,
# ``Annotated[T, meta]``, ``Required[T]`` say how a name is bound, not its class: ``Q[T]`` is
# a ``T``, and a bare ``Final`` leaves the class to the value (``__version__: Final = "1.2"``
# is a str).
_QUALIFIERS = frozenset(
    f"{module}.{name}"
    for module in ("typing", "typing_extensions")
    for name in ("Final", "ClassVar", "Annotated", "Required", "NotRequired", "ReadOnly")
)


# SQLAlchemy 2's declarative annotations: ``config: Mapped[Config] = mapped_column(...)``
# or ``= relationship()`` makes ``self.config`` (an instance's attribute) a ``Config``.
_MAPPED = frozenset({"sqlalchemy.orm.Mapped", "sqlalchemy.orm.base.Mapped", "sqlalchemy.Mapped"})


# Where ``X[...]`` is no class of instances: typing's special forms and aliases (``List``,
# ``Type``, ``Callable``, ``Iterator``), the builtins and ``collections``' containers
# (their items are ``container_annotation``'s), and Django's typed querysets and managers
# (``QuerySet[Tag]``: ``queryset_annotation``'s).
_NOT_GENERIC_CLASSES = ("typing.", "typing_extensions.", "collections.", "builtins.", "types.")


def _generic_class(head: str) -> bool:
    """``FlowHandler[Ctx, Result]``, ``Repository[User]``: a generic class subscripted in an
    annotation names an instance of that class (PEP 484), whatever its parameters."""
    last = head.rpartition(".")[2]
    return (
        bool(last)
        and last[0].isupper()
        and not last.isupper()
        and not head.startswith(_NOT_GENERIC_CLASSES)
        and not last.endswith(("QuerySet", "Manager"))
    )


def annotation_type(node: ast.expr | None, resolver: Resolver) -> str:
    """``x: Foo``, ``x: Foo | None``, ``x: Optional[Foo]``, ``x: "Foo"``, SQLAlchemy's
    ``x: Mapped[Foo]`` and a generic ``x: Foo[T]`` -> resolved Foo."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _string_annotation(node.value, resolver)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return annotation_type(node.left, resolver) or annotation_type(node.right, resolver)
    if isinstance(node, ast.Subscript):
        head = resolver.dotted(node.value) or ""
        if head.endswith(("Optional", "Annotated")) or head in _MAPPED or head in _QUALIFIERS:
            args = type_args(node)
            return annotation_type(args[0], resolver) if args else ""
        if _generic_class(head):
            return statement_class(head)
        # ``set[KeyT]``, ``dict[str, int]``, ``List[Job]`` (PEP 585 / typing): the builtin
        # container itself, as a bare ``set`` or ``dict`` annotation is
        return container_annotation(node, resolver)[0]
    if isinstance(node, ast.Constant) and node.value is None:
        return ""
    found = resolver.dotted(node) or ""
    # ``query: Select`` with ``from sqlalchemy import Select``: the scan's statement name
    return "" if found in _UNTYPED or found in _QUALIFIERS else statement_class(found)


def _string_annotation(text: str, resolver: Resolver) -> str:
    try:
        parsed = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return ""
    if isinstance(parsed, ast.Constant):
        return ""
    return annotation_type(parsed, resolver)


# ``name[*]`` in a scope: what iterating ``name`` gives, for ``name = list(rows)`` and the like
# (an element binding; no code can spell the key, so nothing else reads or shadows it).
ELEMENTS = "[*]"
# ``name[]`` in a scope, ``attr[]`` in a class's attributes: the class of the values an
# annotated container holds (``sessions: dict[str, Session] = {}``).
HELD = "[]"
_MAPPINGS = frozenset(
    {"Dict", "dict", "Mapping", "MutableMapping", "DefaultDict", "defaultdict", "OrderedDict"}
    | {"WeakValueDictionary", "ChainMap"}
)
_SEQUENCES = frozenset(
    {"List", "list", "Sequence", "MutableSequence", "Deque", "deque"}
    | {"Set", "set", "MutableSet", "AbstractSet", "FrozenSet", "frozenset"}
)
_HOLDERS = (*_TYPING, "weakref.")
# Lookups that give one of the values: ``d.get(k)``, ``d.pop(k)``, ``d.setdefault(k, v)``.
_LOOKUPS = frozenset({"get", "pop", "setdefault"})
# What ``self.x`` is made of in a class: its builtin type, then the class of what it holds.
Held = tuple[str, dict[str, str]]  # (first parameter of a method, attr -> class of its values)


def container_annotation(node: ast.expr | None, resolver: Resolver) -> tuple[str, str]:
    """``dict[str, Session]``, ``Dict[str, "Session"]``, ``Optional[List[Job]]``,
    ``set[Tag]``: (the builtin container, the class of its values); the class is "" for
    builtin or typing values (``dict[str, list]``), both "" for anything else."""
    if node is None:
        return "", ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parsed = _parsed(node.value)
        return container_annotation(parsed, resolver) if parsed is not None else ("", "")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left = container_annotation(node.left, resolver)
        return left if left[0] else container_annotation(node.right, resolver)
    if not isinstance(node, ast.Subscript):
        return "", ""
    head = resolver.dotted(node.value) or ""
    last = head.rpartition(".")[2]
    args = type_args(node)
    if (last in ("Optional", "Annotated") or head in _MAPPED) and args:
        # ``Mapped[list["Child"]]``: a SQLAlchemy 2 relationship's collection
        return container_annotation(args[0], resolver)
    if not head.startswith(_HOLDERS):
        return "", ""
    if last in _MAPPINGS and len(args) == 2:
        return "builtins.dict", _value_class(args[1], resolver)
    if last in _SEQUENCES and len(args) == 1:
        kind = "builtins.set" if last.lower().endswith("set") else "builtins.list"
        return kind, _value_class(args[0], resolver)
    return "", ""


def _value_class(node: ast.expr, resolver: Resolver) -> str:
    found = annotation_type(node, resolver)
    return found if capitalised(found) and not found.startswith(_TYPING) else ""


def held_value(node: ast.expr, resolver: Resolver, own: Held | None = None) -> str:
    """``sessions.get(key)``, ``sessions[key]``, ``self.jobs.pop(k)`` on a container
    annotated with the class of its values: that class (the result is it or None, and a
    call on None fails before it does anything). "" otherwise."""
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
        if isinstance(node.ctx, ast.Load):
            return _held_by(node.value, resolver, own)
        return ""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _LOOKUPS
        and (node.args or node.func.attr == "pop")  # ``jobs.pop()``: a list's last
    ):
        return _held_by(node.func.value, resolver, own)
    return ""


register_held(held_value)


def held_elements(node: ast.expr, resolver: Resolver, own: Held | None = None) -> str:
    """``for s in sessions.values()`` / ``for s in self.jobs`` (a list or set): the class
    of the values the container holds, "" when not known."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "values"
        and not node.args
    ):
        return _held_by(node.func.value, resolver, own)
    if isinstance(node, ast.Name | ast.Attribute):
        return _held_by(node, resolver, own, sequence=True)
    return ""


def _held_by(
    container: ast.expr, resolver: Resolver, own: Held | None, *, sequence: bool = False
) -> str:
    if isinstance(container, ast.Name):
        return _scoped_held(resolver.scope, container.id, sequence)
    if not isinstance(container, ast.Attribute) or not isinstance(container.value, ast.Name):
        return ""
    if own is not None:
        return own[1].get(container.attr, "") if container.value.id == own[0] else ""
    owner = resolver.scope.lookup(container.value.id)
    if owner is None or not owner.target:
        return ""
    cls = resolver.classes.get(owner.target)
    if owner.kind in (BindingKind.SELF, BindingKind.CLS) and cls is not None:
        if container.attr not in cls.attributes:
            return _deferred_held(owner.target, container.attr, sequence)
        kind = cls.attributes.get(container.attr, "")
        if sequence and kind not in ("builtins.list", "builtins.set"):
            return ""
        return cls.attributes.get(f"{container.attr}{HELD}", "")
    if owner.kind in (BindingKind.SELF, BindingKind.CLS, BindingKind.INSTANCE, BindingKind.PARAM):
        return _deferred_held(owner.target, container.attr, sequence)
    return ""


# ``pkg.Manifest.repos[each]``: what iterating attribute ``repos`` of a ``Manifest`` gives, for
# the index to read in the class (or a base) of any module: the class its annotation says a
# list or set of it holds (``repos: list[Repo]``); ``pkg.Manifest.repos[]``: one value of it
# (``manifest.repos[0]``, ``.get(k)``, ``.values()``), a dict's too.
EACH = "[each]"


def deferred_held(name: str) -> bool:
    """``pkg.Manifest.repos[each]`` / ``pkg.Manifest.repos[]``: a name the index reads, not
    a class known here."""
    return name.endswith((EACH, HELD))


def held_binding_of(held: str) -> Binding:
    """A value of a container: an instance of its class when this module knows it; else
    of a type not known here (calls on it keep their method name, ``?.install``, so what
    any receiver of that name does is still seen), carrying the index's name for it, as
    ``returned_by`` does for a function of another module."""
    if deferred_held(held):
        return Binding(BindingKind.OTHER, held)
    return Binding(BindingKind.INSTANCE, held)


def _deferred_held(owner: str, attr: str, sequence: bool) -> str:
    """An attribute of an instance of a class this module may not define (``manifest.repos``
    with ``manifest: Manifest``, or ``self.items`` a base declares): the index's name for
    what it holds ("" when the owner is no class: a builtin, a typing form)."""
    last = owner.rpartition(".")[2]
    if not last[:1].isupper() or owner.startswith(_TYPING) or not attr.isidentifier():
        return ""
    return f"{owner}.{attr}{EACH if sequence else HELD}"


def _scoped_held(scope: Scope, name: str, sequence: bool) -> str:
    """The class of the values of the container ``name`` is in the scope that binds it
    (a local of that name hides the module's annotated one)."""
    current: Scope | None = scope
    first = True
    while current is not None:
        if first or current.kind is not ScopeKind.CLASS:
            found = current.names.get(name)
            if found is not None:
                held = current.names.get(f"{name}{HELD}")
                if held is None and not sequence:
                    # ``kids = sorted(page.children)``; ``kids[0]``, ``kids.pop()``: an element
                    return _element_class(current.names.get(f"{name}{ELEMENTS}"))
                if held is None or (sequence and held.scoped):
                    return ""
                return held.target
        first = False
        current = current.parent
    return ""


def _element_class(element: Binding | None) -> str:
    """The class of an element binding (``name[*]``): a project or library instance, a
    model's row, or the index's name for one; "" for anything else (a table's values, a
    module's objects)."""
    if element is None or element.param or not element.target:
        return ""
    if element.kind in (BindingKind.INSTANCE, BindingKind.ORM):
        return element.target
    return element.target if deferred_held(element.target) else ""


def held_binding(annotation: ast.expr, resolver: Resolver) -> Binding | None:
    """What ``name[]`` is bound to for ``name: dict[str, Session] = ...``: the class of the
    values (an OTHER binding: ``name[]`` is no name code can call), ``scoped`` when the
    container is a mapping (iterating it gives keys, not values)."""
    kind, held = container_annotation(annotation, resolver)
    if not held:
        return None
    return Binding(BindingKind.OTHER, held, scoped=kind == "builtins.dict")


def _related_row(call: ast.Call, resolver: Resolver) -> str:
    """``self.children.filter(...).last()``, ``node.children.first()``: one row of a model's
    reverse-relation manager (``related_rows``), as ``Model.objects.first()`` is one."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in ORM_ROW:
        return ""
    return related_rows(call.func.value, resolver, bare=True)


def _manager_of(node: ast.expr) -> tuple[ast.expr, int]:
    """``x.children.filter(...).order_by(...)`` -> (``x.children``, 2): the expression the
    queryset methods are called on, and how many there are."""
    calls = 0
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _ROWS
    ):
        node, calls = node.func.value, calls + 1
    return node, calls


def parameter_rows(node: ast.expr, resolver: Resolver) -> str:
    """``for rep in corp_profile.reps.all()`` where ``corp_profile`` is rooted at a parameter
    of no annotation (``corp_profile = kwargs["instance"].corp_profile`` in a receiver):
    ``"instance.corp_profile.reps[]"``, the rows of that relation, for the classifier to
    type once it knows the parameter's class (the receiver's sender, the callers). ""
    when not that shape (a manager, not a relation: ``objects``)."""
    node, calls = _manager_of(node)
    if not calls or not isinstance(node, ast.Attribute) or node.attr in _MANAGER_NAMES:
        return ""
    root = resolver.param_root(node)
    return f"{root}{HELD}" if root and "." in root else ""


def related_rows(node: ast.expr, resolver: Resolver, *, bare: bool = False) -> str:
    """``for child in self.children.filter(...)``, ``parent.children.all()`` (a model's
    reverse-relation manager, through queryset methods): ``"pkg.Node.children[]"``, the
    rows of whatever model a ForeignKey names ``children`` for Node, which the index
    knows (the field is often in another module). "" when not that shape. ``bare``: the
    manager itself (``node.children`` of ``node.children.first()``) counts, no method needed."""
    node, calls = _manager_of(node)
    if not (calls or bare) or not isinstance(node, ast.Attribute):
        return ""
    if not isinstance(node.value, ast.Name) or node.attr in _MANAGER_NAMES:
        return ""
    binding = resolver.scope.lookup(node.value.id)
    if binding is None or not binding.target:
        return ""
    if binding.kind is BindingKind.SELF:
        cls = resolver.classes.get(binding.target)
        if cls is not None and (node.attr in cls.attributes or node.attr in cls.methods):
            return ""
    elif binding.kind not in (BindingKind.ORM, BindingKind.INSTANCE, BindingKind.PARAM):
        return ""  # a parameter counts by its annotation (``page: Page``)
    if not capitalised(binding.target) or binding.target.startswith(_TYPING):
        return ""
    return f"{binding.target}.{node.attr}{HELD}"

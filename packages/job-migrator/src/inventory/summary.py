"""Per-file summaries: what the extractor reads out of one module, once.

This is the intermediate representation between the two halves of a scan:

* the **extractor** (``inventory._extract``) turns the text of one file into a
  :class:`FileSummary` using only that file (its own imports, scopes and
  local assignments). It runs in worker processes and its output is cached
  by content hash, so it must be a pure function of ``(module, source)``.
* the **classifier** (``inventory._classify``) joins all summaries: resolves
  names across modules (re-exports, relative imports), builds the call graph,
  matches calls against the effect catalogue, runs the fixpoint and produces
  the :class:`inventory.models.Inventory`.

Dotted names here are *locally resolved*: imports and aliases of the file
are applied (``from requests import post as p; p()`` gives ``requests.post``,
``from .mail import send`` in ``shop.views`` gives ``shop.mail.send``), but
re-exports through other modules are not (that needs the global index).
Names that are not imported are qualified with the current module
(``helper()`` in ``shop.views`` gives ``shop.views.helper``).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from inventory.models import Argument, Framework, Pattern

SUMMARY_VERSION = "1"
# ``CallInfo.when_param`` of a call written under ``if p is not None:``: ``p`` and this
NOT_NONE = " is not None"
# A call's argument as recorded (``CallInfo.args`` / ``kwargs``): a literal's value, or
# this for any other expression.
ArgValue = str | int | float | bool | None
EXPR = "<expr>"
# In ``ClassInfo.attributes``: ``attr_class = MirroredFile`` in a FileField subclass, the class
# of the value a model instance holds for the field (Django's FieldFile unless set), kept under
# its own key (a class, not an instance); "?" when it is no name the scan can resolve.
ATTR_CLASS = "attr_class="


class Span(BaseModel):
    line: int
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None


class ReceiverKind(StrEnum):
    """What the receiver of a method call is, as far as one file can tell."""

    NONE = "none"  # a plain function call: ``target`` is the dotted function name
    MODULE = "module"  # ``requests.post``: attribute of an imported module
    CLASS = "class"  # ``Order.objects.create`` / ``Mailer.send``: attribute chain on a class
    INSTANCE = "instance"  # ``x = Mailer(); x.send()``: ``target`` is ``pkg.Mailer.send``
    SELF = "self"  # ``self.send()`` inside class C: ``target`` is ``pkg.C.send``
    UNKNOWN = "unknown"  # ``obj.save()`` with obj of unknown type: ``target`` is ``?.save``


# A call of a named function: ``send(x)``, or ``mail.send(x)`` of an imported module.
FUNCTION_CALLS = (ReceiverKind.NONE, ReceiverKind.MODULE)


# The pydantic mypy plugin gives __init__ a ``**kwargs`` that clashes with the ``kwargs``
# field (pydantic/pydantic#3125); renaming the field would change the cached JSON.
class CallInfo(BaseModel):  # type: ignore[no-redef]
    """One call expression inside a function body (or at module level)."""

    target: str = Field(
        description="Locally resolved dotted name; '?.meth' when the receiver is unknown."
    )
    receiver: ReceiverKind = ReceiverKind.NONE
    receiver_source: str = Field(
        default="", description="Receiver expression as written, e.g. 'self.client'."
    )
    receiver_param: str = Field(
        default="",
        description="The receiver rooted at the parameter it stands for, when its root is a "
        "local copy of a parameter or a value read from the ``**`` parameter: "
        "'instance.group' for ``group = kwargs['instance']; group.group.delete()``.",
    )
    span: Span
    args: list[str | int | float | bool | None] = Field(
        default_factory=list,
        description="Positional arguments: literal values; non-literal ones as '<expr>' strings.",
    )
    arg_sources: list[str] = Field(
        default_factory=list, description="Positional argument expressions as written."
    )
    kwargs: dict[str, str | int | float | bool | None] = Field(
        default_factory=dict,
        description="Keyword arguments: literal value, or '<expr>' for others.",
    )
    kwarg_sources: dict[str, str] = Field(default_factory=dict)
    arg_types: list[str] = Field(
        default_factory=list,
        description=(
            "Positional arguments that are names of a known class ('stmt' after 'stmt = "
            "select(User)' -> 'sqlalchemy.sql.Select'), '' for the others; empty when none is."
        ),
    )
    kwarg_types: dict[str, str] = Field(
        default_factory=dict,
        description="Keyword arguments whose class is known, as ``arg_types`` gives them.",
    )
    arg_params: list[str] = Field(
        default_factory=list,
        description=(
            "Positional arguments that are an unannotated parameter of the enclosing function "
            "(or a local copy of one, or a key of its ``**`` parameter): that parameter, '' for "
            "the others; empty when none is. The classifier types them from the function's own "
            "callers (``_classify/_arguments.py``)."
        ),
    )
    kwarg_params: dict[str, str] = Field(
        default_factory=dict,
        description="Keyword arguments that are such a parameter, as ``arg_params``.",
    )
    arg_callables: list[str] = Field(
        default_factory=list,
        description=(
            "Positional arguments that name a function (a module-level def or an imported "
            "one, ``run_with(post_hook, x)``): its dotted name, '' for the others; empty when "
            "none is. What a callee calls through that parameter (``cb(x)``, or "
            "``self.cb(x)`` after ``self.cb = cb``) is that function when every project "
            "call agrees (``_classify/_arguments.py``)."
        ),
    )
    kwarg_callables: dict[str, str] = Field(
        default_factory=dict,
        description="Keyword arguments that name a function, as ``arg_callables``.",
    )
    result_used: bool = True
    returned_from: str = Field(
        default="",
        description=(
            "For a '?.meth' target: the call whose result the receiver is "
            "('s = get_session(); s.commit()' -> 'pkg.get_session()'), for the index to type."
        ),
    )
    uses_param: list[str] = Field(
        default_factory=list,
        description="Parameters of the enclosing function the arguments mention.",
    )
    receiver_made_at: int = Field(
        default=0,
        description=(
            "An instance receiver bound to a constructor call of its class here "
            "(``s = Mailer(...); s.send()``, ``Mailer(...).send()``): that call's line; 0 "
            "otherwise (a row loaded, a parameter, a factory's result, a name bound in "
            "branches, an attribute)."
        ),
    )
    spread_keys: list[str] | None = Field(
        default=None,
        description=(
            "The keys a single ``**name`` argument passes when ``name`` is a dict literal "
            'of string keys made in the function (``kw = {"title": t}``, plus '
            '``kw["pk"] = ...`` set later); None when not known.'
        ),
    )
    receiver_loaded: bool = Field(
        default=False,
        description=(
            "An instance receiver that is a row the ORM loaded (``obj = M.objects.get(...)``, "
            "``obj, created = get_or_create(...)``, a loop over a queryset): ``save()`` on it "
            "is an UPDATE whatever else the function constructs."
        ),
    )
    receiver_declared: bool = Field(
        default=False,
        description=(
            "An instance receiver whose class is declared, not made by a constructor of that "
            "class here (an annotation, a factory's return type, ``cls()``): the object may be "
            "of any subclass, so a subclass's override of the method may run."
        ),
    )
    failure_path: bool = Field(
        default=False,
        description=(
            "The call is written in an ``except`` handler of its function: it runs only "
            "when something in the ``try`` body raised (a retry's back-off sleep)."
        ),
    )
    when_param: str = Field(
        default="",
        description=(
            "A parameter of the calling function, never rebound there, under whose truth the "
            "call is written (``if synchronous: run_job.apply(...)``, the call in the ``if`` "
            "body): a caller that leaves it at a falsy default never reaches the call. "
            "``p is not None`` when the test is that (``if p is not None:``, or an earlier "
            "``if p is None: return``)."
        ),
    )
    entered: str = Field(
        default="",
        description=(
            "'with' or 'async with' when the call's result is the context manager of that "
            "statement (``with Audit(order):``): the statement runs its class's ``__enter__`` "
            "and ``__exit__`` (``__aenter__`` and ``__aexit__``), as the data model says; "
            "'for' or 'async for' when a loop iterates it (``__iter__`` and ``__next__``, "
            "``__aiter__`` and ``__anext__``)."
        ),
    )


class FactKind(StrEnum):
    """Syntactic effects that are not calls."""

    AUGASSIGN_ATTR = "augassign_attr"  # obj.count += 1  (persisted if obj is later saved)
    AUGASSIGN_SUBSCRIPT = "augassign_subscript"  # counts[key] += 1, d[k] = d.get(k, 0) + v
    AUGASSIGN_GLOBAL = "augassign_global"  # global counter; counter += 1
    STATE_ASSIGN = "state_assign"  # obj.spend = 0.0: a money or business-state field is set
    SQL_LITERAL = "sql_literal"  # a string literal that is SQL (INSERT/UPDATE/DELETE ...)
    DYNAMIC_DISPATCH = "dynamic_dispatch"  # getattr(x, name)(), registry[name](), importlib
    LOOP_FOREVER = "loop_forever"  # while True: without a break (long-lived consumer)
    STREAM_LOOP = "stream_loop"  # async for x in stream(): in the body, not nested in a loop
    SERVICE_LOOP = "service_loop"  # while <liveness check>: waiting each round; a consumer loop
    MODULE_STATE = "module_state"  # TASKS.pop(k), CACHE[k] = v: a module-level container
    REQUEST_STATE = "request_state"  # session["k"] = v: the request being served (Flask's)
    REQUEST_READ = "request_read"  # request.args, current_user: reads the request being served


# A DYNAMIC_DISPATCH fact's target for ``cb(x)`` where ``cb`` is a parameter: this prefix and
# the parameter's name (``parameter cb``); a local of unknown value is ``variable cb``.
PARAMETER_DISPATCH = "parameter "


class GuardKind(StrEnum):
    """A block around calls that a caller relies on while they run in it."""

    CAUGHT = "caught"  # try: ... except: the handlers run when a call in the body raises
    ATOMIC = "atomic"  # with transaction.atomic(): / @transaction.atomic: rolled back on raise


class Guard(BaseModel):
    kind: GuardKind
    first: int = Field(description="First line of the guarded body.")
    last: int = Field(description="Last line of the guarded body.")
    lines: list[int] = Field(
        description="Where the guard is written: the handlers' `except` lines (not one that "
        "only re-raises, logs or passes), the `with` line or the decorator's line."
    )


class Fact(BaseModel):
    kind: FactKind
    span: Span
    text: str = Field(description="The statement or literal, shortened to 200 characters.")
    target: str = ""

    def called_parameter(self) -> str | None:
        """``cb`` for ``cb(x)`` through the parameter ``cb`` (a dynamic dispatch fact whose
        target is ``PARAMETER_DISPATCH`` and the name), else None."""
        if self.kind != FactKind.DYNAMIC_DISPATCH or not self.target.startswith(PARAMETER_DISPATCH):
            return None
        return self.target.removeprefix(PARAMETER_DISPATCH)


class Store(BaseModel):
    """An assignment, augmented assignment or deletion of an attribute or item of a
    parameter (``self.name = None``, ``instance.tags[k] = v``, ``del obj.cache``): the
    function changes the object it was given, in memory."""

    param: str
    text: str = Field(description="The statement, shortened to 200 characters.")
    span: Span


class FunctionInfo(BaseModel):
    qualname: str = Field(
        description="module.func, module.Class.method, module.outer.<locals>.inner"
    )
    name: str
    span: Span
    is_async: bool = False
    is_method: bool = False
    class_name: str | None = None
    params: list[str] = Field(default_factory=list)
    kwarg: str = Field(default="", description="The name of the ``**`` parameter, if any.")
    positional: int = Field(
        default=-1,
        description="How many of ``params`` a caller may pass by position (those before a "
        "``*`` parameter or marker), ``self`` included; -1 when not read.",
    )
    falsy_defaults: list[str] = Field(
        default_factory=list,
        description="Parameters whose default is a falsy literal (``None``, ``False``, ``0``, "
        "``''``): left out by a caller, they are falsy in the body.",
    )
    none_defaults: list[str] = Field(
        default_factory=list,
        description="Parameters whose default is ``None``: left out by a caller, they are "
        "``None`` in the body.",
    )
    decorators: list[str] = Field(
        default_factory=list, description="Locally resolved dotted names."
    )
    decorator_sources: list[str] = Field(default_factory=list)
    handler: Framework | None = None
    calls: list[CallInfo] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    stores: list[Store] = Field(
        default_factory=list,
        description="The first change of each parameter's attributes or items (``Store``).",
    )
    source_hash: str = Field(
        default="",
        description="Hash of the function's own source text (sha256(inspect.getsource(fn))[:16]); "
        "not the gate's fingerprint, which also covers what the function reaches.",
    )
    vetoes: bool = Field(
        default=False,
        description="The body only inspects and raises (a signal receiver that vetoes).",
    )
    returns_value: bool = Field(
        default=False,
        description="Its own body has a `return <value>` (not None) or a `yield`: connected "
        "to a signal, `send()` hands the value to the sender (a registry's answer).",
    )
    guards: list[Guard] = Field(
        default_factory=list,
        description="`try`/`except` and `transaction.atomic` blocks in its own body (not in a "
        "nested def), and an `@atomic` decorator on it (the whole function).",
    )
    yields_callable: str | None = Field(
        default=None,
        description=(
            "A @contextmanager / @asynccontextmanager generator whose every yield gives the "
            "same function (a module function, or a def of its own): that function, locally "
            "resolved ('pkg.f.<locals>.release'). What ``with f() as name`` binds name to."
        ),
    )


class ClassInfo(BaseModel):
    qualname: str
    name: str
    span: Span
    bases: list[str] = Field(default_factory=list, description="Locally resolved dotted names.")
    methods: list[str] = Field(
        default_factory=list, description="Method names defined in the body."
    )
    attributes: dict[str, str] = Field(
        default_factory=dict,
        description="self.attr = Ctor(...) in any method: attr -> locally resolved ctor name.",
    )
    related: dict[str, str] = Field(
        default_factory=dict,
        description="Reverse relations a model's ForeignKey fields give the model they point "
        "to: manager name (related_name, else '<model>_set') -> that model, locally resolved.",
    )
    many: dict[str, str] = Field(
        default_factory=dict,
        description="A model's many-to-many fields: field name -> the model whose rows its "
        "manager holds ('self': the class itself), locally resolved.",
    )
    held_parameters: dict[str, str] = Field(
        default_factory=dict,
        description="Attributes a method sets from one of its unannotated parameters "
        "(``self.client = client`` in ``__init__``): attribute -> 'method qualname:parameter'. "
        "The classifier types them as the parameter once its callers type it.",
    )
    unique_keys: list[str] = Field(
        default_factory=list,
        description="Unique keys a model declares (unique/primary-key/one-to-one fields, "
        "unique_together, UniqueConstraint), each as its field names joined by '+'.",
    )
    form_model: str = Field(
        default="",
        description="``class Meta: model = X`` in the class body (a Django ModelForm): X, the "
        "model whose instance ``form.save()`` saves, locally resolved; '' when none.",
    )
    view_model: str = Field(
        default="",
        description="``model = X`` or ``queryset = X.objects...`` in the class body (a Django "
        "or DRF generic view): X, the model whose row ``self.get_object()`` returns, locally "
        "resolved; '' when none.",
    )
    inlines: list[str] = Field(
        default_factory=list,
        description="``inlines = [PhotoInline, ...]`` in a Django ``ModelAdmin``'s body: the "
        "inline classes whose models the admin's change form saves, locally resolved.",
    )


class TargetKind(StrEnum):
    FUNCTION = "function"  # a name or attribute that resolves to a function
    PARTIAL = "partial"  # functools.partial(fn, ...)
    LAMBDA = "lambda"  # lambda: fn(...)
    BOUND_METHOD = "bound_method"  # obj.method / self.method
    CALL_RESULT = "call_result"  # create_task(fn(...)): the coroutine fn(...)
    THREAD_SUBCLASS = "thread_subclass"  # class T(Thread) with run(); T().start()
    YIELDED = "yielded"  # with manager() as g: on_commit(g): target is the manager
    DYNAMIC = "dynamic"  # only known at run time


class RawSite(BaseModel):
    """An in-process job call site as one file sees it (before global resolution)."""

    pattern: Pattern
    span: Span
    target: str | None = Field(
        description="Locally resolved dotted name of the job, None if dynamic."
    )
    target_kind: TargetKind
    target_source: str = ""
    unresolved_reason: str = ""
    returned_from: str = Field(
        default="",
        description=(
            "For a bound method '?.meth' target: the call whose result the receiver is "
            "('m = make_manager(); Thread(target=m.run)' -> 'pkg.make_manager()'), for the "
            "index to type, as CallInfo.returned_from."
        ),
    )
    enclosing_function: str | None = None
    handler: Framework | None = None
    result_used: bool = False
    result_use_lines: list[int] = Field(default_factory=list)
    result_kept_in: str | None = None
    arguments: list[Argument] = Field(default_factory=list)
    detail: str = ""
    signals: list[str] = Field(
        default_factory=list,
        description="A signal receiver's signals (Django or blinker objects it is connected "
        "to), locally resolved: `sig.send(...)` runs it.",
    )
    sender: str = Field(
        default="",
        description="A signal receiver's `sender=` filter, locally resolved ('' for none, "
        "'?' for a value the scan cannot name): a model's save() runs the receivers of "
        "post_save for that model and for none.",
    )
    signal_to_confirm: bool = Field(
        default=False,
        description="A receiver connected (`@sig.connect`, `sig.connect(fn)`) to an object "
        "imported from another module, which this file cannot type: a site only if the "
        "classifier finds each of its `signals` to be a blinker signal where it is made.",
    )


class FileSummary(BaseModel):
    version: str = SUMMARY_VERSION
    path: str = Field(description="POSIX path relative to the scan root.")
    module: str = Field(description="Dotted module name derived from the path.")
    is_package: bool = False
    lines: int = 0
    imports: dict[str, str] = Field(
        default_factory=dict, description="Local name -> dotted name it refers to (for re-exports)."
    )
    star_imports: list[str] = Field(default_factory=list)
    all_names: list[str] | None = Field(
        default=None, description="__all__ when it is a literal list."
    )
    functions: list[FunctionInfo] = Field(default_factory=list)
    classes: list[ClassInfo] = Field(default_factory=list)
    atomic_requests: list[int] = Field(
        default_factory=list,
        description="Lines setting Django's ATOMIC_REQUESTS to a value that is not a literal "
        'False: `{"ATOMIC_REQUESTS": v}`, `dict(ATOMIC_REQUESTS=v)`, `d["..."] = v`.',
    )
    sites: list[RawSite] = Field(default_factory=list)
    module_calls: list[CallInfo] = Field(default_factory=list, description="Calls at module level.")
    assignments: dict[str, str] = Field(
        default_factory=dict,
        description="Module-level name = dotted name aliases (send = mail.send_email), for resolution.",
    )
    rebound: dict[str, list[int]] = Field(
        default_factory=dict,
        description="A function defined at module level (``send``) or in a class body "
        "(``Mailer.send``) whose name a later statement binds again (``send = logged(send)``, "
        "another ``def send`` in a later branch, an import of it) -> the first definition's "
        "line, then those statements' lines: what the name holds once the module is imported "
        "is not (always) that definition.",
    )
    fresh_returns: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Functions and methods (local qualname) that return a new instance they build "
            "without a primary key -> its class, or the call whose result they return "
            "('pkg.Base.to_change()'): saving what they return inserts a row."
        ),
    )
    narrowing_helpers: dict[str, int] = Field(
        default_factory=dict,
        description=(
            "Functions and methods (local qualname) whose every return is the statement "
            "handed to them, narrowed by SQLAlchemy's generative methods (`return "
            "query.where(...)`) -> the position of that argument in a call: what a call "
            "returns is what the caller handed there."
        ),
    )
    routes: dict[str, Framework] = Field(
        default_factory=dict,
        description=(
            "Functions this file registers as views by a call (``path('x/', views.f)``, "
            "``add_url_rule``, ``add_api_route``...): locally resolved dotted name -> "
            "framework. The classifier makes them request handlers (a class named so is not)."
        ),
    )
    installed: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Code this file's Django settings install to run in the request, by dotted path "
            "(``MIDDLEWARE``, context processors, authentication backends, DRF's default "
            "authentication / permission / throttle classes and exception handler), and "
            "the middleware classes of Starlette's and FastAPI's ``add_middleware`` -> what "
            "it is installed as (``_extract.detectors._installed.Installed``)."
        ),
    )
    view_classes: dict[str, Framework] = Field(
        default_factory=dict,
        description=(
            "Classes (or functions) this file registers as views: ``X.as_view()``, "
            "``router.register(prefix, X)``, ``api.add_resource(X, url)``, Starlette's "
            "``Route(path, X)``. Their HTTP-method handlers become request handlers."
        ),
    )
    named_signals: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "blinker's named signals this file binds (``done = signal('done')`` at module "
            "level, ``self.sig = signal('x')`` in a class): ``module.done`` / "
            "``module.Class.sig`` -> the signal's name. ``signal(name)`` returns the one "
            "signal of that name, so each is the same object wherever it is made."
        ),
    )
    tables: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Module-level dict literals whose every value is a name (``HANDLERS = {'a': f}``): "
            "``HANDLERS[k]()`` runs one of them. Locally resolved dotted names, in order."
        ),
    )

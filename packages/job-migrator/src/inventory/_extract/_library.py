"""What the extractor knows about library functions: which return an instance of what.

SQLAlchemy (2.0's documented API, ``docs.sqlalchemy.org/en/20/orm/session_api.html``)
takes most of it: a session is made by a factory the application configures once
(``Session = sessionmaker(engine)``), statements are built by chains of generative
methods (``select(User).where(...).limit(1)``), and what ``execute`` returns is read by
chains again (``result.scalars().all()``). Typing each link lets the effect catalogue say
what the call at the end of the chain does to the rows.
"""

from __future__ import annotations

EVENT_LOOP = "asyncio.AbstractEventLoop"
# The methods of Python's ``logging`` API (a ``Logger``'s, and the module's own functions).
LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
)

# The scan's canonical names (what ``inventory/catalogue.toml`` matches).
SESSION = "sqlalchemy.orm.Session"
ASYNC_SESSION = "sqlalchemy.ext.asyncio.AsyncSession"
QUERY = "sqlalchemy.orm.Query"
RESULT = "sqlalchemy.engine.Result"
SCALARS = "sqlalchemy.engine.ScalarResult"
SELECT = "sqlalchemy.sql.Select"
INSERT = "sqlalchemy.sql.Insert"
UPDATE = "sqlalchemy.sql.Update"
DELETE = "sqlalchemy.sql.Delete"
# No such class: the scan's name for ``insert(...).on_conflict_do_update(...)`` (and
# ``on_conflict_do_nothing``, MySQL's ``on_duplicate_key_update``): an INSERT whose
# conflict with an existing row updates or skips it, so a retry converges (an upsert).
UPSERT = "sqlalchemy.sql.Upsert"

# Where each class is imported from, as written in applications.
_SESSIONS = ("sqlalchemy.orm.Session", "sqlalchemy.orm.session.Session", "sqlmodel.Session")
_ASYNC_SESSIONS = (
    "sqlalchemy.ext.asyncio.AsyncSession",
    "sqlalchemy.ext.asyncio.session.AsyncSession",
    "sqlmodel.ext.asyncio.session.AsyncSession",
)
_DIALECTS = ("postgresql", "sqlite", "mysql")
_BUILDERS = {
    SELECT: ("select", "sql.select", "sql.expression.select", "future.select"),
    INSERT: ("insert", "sql.insert", "sql.expression.insert"),
    UPDATE: ("update", "sql.update", "sql.expression.update"),
    DELETE: ("delete", "sql.delete", "sql.expression.delete"),
}

# Generative methods: each returns a new statement of the same kind.
_SELECT_CHAIN = [
    "where",
    "filter",
    "filter_by",
    "order_by",
    "group_by",
    "having",
    "join",
    "outerjoin",
    "join_from",
    "select_from",
    "limit",
    "offset",
    "distinct",
    "options",
    "execution_options",
    "with_for_update",
    "add_columns",
    "with_only_columns",
    "correlate",
    "params",
    "subquery",
    "cte",
    "union",
    "union_all",
    "exists",
    "label",
    "alias",
    "scalar_subquery",
]
_DML_CHAIN = ["where", "filter", "filter_by", "values", "returning", "execution_options", "inline"]
_UPSERTS = ("on_conflict_do_update", "on_conflict_do_nothing", "on_duplicate_key_update")
_QUERY_CHAIN = [
    "filter",
    "filter_by",
    "where",
    "order_by",
    "group_by",
    "having",
    "join",
    "outerjoin",
    "select_from",
    "limit",
    "offset",
    "distinct",
    "options",
    "execution_options",
    "with_for_update",
    "populate_existing",
    "with_entities",
    "add_columns",
    "add_entity",
    "yield_per",
    "enable_eagerloads",
    "autoflush",
    "correlate",
    "params",
]
_RESULT_CHAIN = ["scalars", "mappings", "unique", "columns", "yield_per", "partitions"]


# The statement classes as applications name them in annotations (``query: Select``,
# ``-> "Select"``): SQLAlchemy 2.0 exports them at the top level and from ``sqlalchemy.sql``
# and ``sqlalchemy.sql.expression``; they are defined in ``sql.selectable`` / ``sql.dml``.
# PostgreSQL's, SQLite's and MySQL's ``Insert`` (their ``insert()``) is an INSERT until an
# ``on_conflict_*`` / ``on_duplicate_key_update`` makes it an upsert.
_DEFINED_IN = {SELECT: "selectable", INSERT: "dml", UPDATE: "dml", DELETE: "dml"}


def _statement_classes() -> dict[str, str]:
    found: dict[str, str] = {}
    for kind, module in _DEFINED_IN.items():
        name = kind.rpartition(".")[2]
        for owner in ("sqlalchemy", "sqlalchemy.sql", "sqlalchemy.sql.expression"):
            found[f"{owner}.{name}"] = kind
        found[f"sqlalchemy.sql.{module}.{name}"] = kind
    found["sqlalchemy.future.Select"] = SELECT
    for dialect in _DIALECTS:
        found[f"sqlalchemy.dialects.{dialect}.Insert"] = INSERT
        found[f"sqlalchemy.dialects.{dialect}.dml.Insert"] = INSERT
    return found


STATEMENT_CLASSES = _statement_classes()
STATEMENTS = frozenset({*_BUILDERS, UPSERT})  # the scan's names of the statement kinds
# Generative methods that return a statement of the same kind, whatever it is: ``q =
# q.where(...)`` keeps what ``q`` was (``on_conflict_*`` turns an INSERT into an upsert,
# ``subquery``/``exists``/``cte`` make another construct: not these).
NARROWING = frozenset(
    {
        *(m for m in _SELECT_CHAIN if m not in ("subquery", "cte", "exists", "label", "alias")),
        *_DML_CHAIN,
    }
) - {"union", "union_all", "scalar_subquery"}


def statement_class(name: str) -> str:
    """``sqlalchemy.Select`` (an annotation as imported) -> ``sqlalchemy.sql.Select``, the
    scan's name of the statement kind; ``name`` itself for any other class."""
    return STATEMENT_CLASSES.get(name, name)


def _session_methods(session: str) -> dict[str, str]:
    """What a session's methods return: ``execute`` a Result, ``scalars`` a ScalarResult,
    ``query`` (the 1.x API) a Query, SQLModel's ``exec`` a ScalarResult. ``begin`` on the
    factory (``with Session.begin() as session``, the factory standing for the class: see
    ``SESSION_FACTORIES``) gives a session; on a session, a transaction whose ``with``
    block is rarely named."""
    cls = ASYNC_SESSION if "Async" in session else SESSION
    return {
        f"{session}.execute": RESULT,
        f"{session}.scalars": SCALARS,
        f"{session}.exec": SCALARS,
        f"{session}.query": QUERY,
        f"{session}.stream": RESULT,
        f"{session}.stream_scalars": SCALARS,
        f"{session}.begin": cls,
    }


def _statements() -> dict[str, str]:
    found: dict[str, str] = {}
    for kind, builders in _BUILDERS.items():
        for builder in builders:
            found[f"sqlalchemy.{builder}"] = kind
        found[f"sqlmodel.{builders[0]}"] = kind
        for method in _SELECT_CHAIN if kind == SELECT else _DML_CHAIN:
            found[f"{kind}.{method}"] = kind
    for dialect in _DIALECTS:
        found[f"sqlalchemy.dialects.{dialect}.insert"] = INSERT
        found[f"sqlalchemy.dialects.{dialect}.dml.insert"] = INSERT
    for method in _UPSERTS:
        found[f"{INSERT}.{method}"] = UPSERT
    for method in ("returning", "execution_options"):
        found[f"{UPSERT}.{method}"] = UPSERT
    return found


def _sqlalchemy() -> dict[str, str]:
    found = _statements()
    for session in _SESSIONS:
        found.update(_session_methods(session))
    for session in _ASYNC_SESSIONS:
        found.update(_session_methods(session))
    for method in _QUERY_CHAIN:
        found[f"{QUERY}.{method}"] = QUERY
    for method in _RESULT_CHAIN:
        found[f"{RESULT}.{method}"] = SCALARS if method == "scalars" else RESULT
        found[f"{SCALARS}.{method}"] = SCALARS
    return found


# Calls whose result stands for a session class: a configured factory (``sessionmaker``,
# ``async_sessionmaker``, ``scoped_session``) is called like the class to make a session
# (``with Session() as session``), and ``scoped_session`` proxies the session's methods
# (``Session.add(x)``). ``class_=`` names another session class.
SESSION_FACTORIES = {
    "sqlalchemy.orm.sessionmaker": SESSION,
    "sqlalchemy.orm.session.sessionmaker": SESSION,
    "sqlalchemy.orm.scoped_session": SESSION,
    "sqlalchemy.orm.scoping.scoped_session": SESSION,
    "sqlalchemy.ext.asyncio.async_sessionmaker": ASYNC_SESSION,
    "sqlalchemy.ext.asyncio.session.async_sessionmaker": ASYNC_SESSION,
    "sqlalchemy.ext.asyncio.async_scoped_session": ASYNC_SESSION,
    "sqlalchemy.ext.asyncio.scoping.async_scoped_session": ASYNC_SESSION,
}
SESSION_TYPES = frozenset({SESSION, ASYNC_SESSION})
# A session class passed as ``class_=``: its canonical name.
SESSION_CLASSES = {name: SESSION for name in _SESSIONS} | dict.fromkeys(
    _ASYNC_SESSIONS, ASYNC_SESSION
)
# Attributes of a library object that hold a session: Flask-SQLAlchemy's ``db.session``
# (a ``scoped_session``), whatever module ``SQLAlchemy`` was imported from.
SESSION_ATTRIBUTES = {
    "flask_sqlalchemy.SQLAlchemy.session": SESSION,
    "flask_sqlalchemy.extension.SQLAlchemy.session": SESSION,
}


def retyped(name: str) -> str:
    """``sqlalchemy.orm.Session.query().filter().first`` -> ``sqlalchemy.orm.Query.first``:
    a chain of calls whose every link ``FACTORIES`` types (or a library class called: an
    instance of it), as the name of its last method on the class it is called on; ``name``
    itself when a link is not known."""
    if "()." not in name:
        return name
    parts = name.split("().")
    current = parts[0]
    for part in parts[1:]:
        made = FACTORIES.get(current) or (current if _capitalised(current) else None)
        if made is None:
            return name
        current = f"{made}.{part}"
    return current


def _capitalised(dotted: str) -> bool:
    last = dotted.rpartition(".")[2]
    return bool(last) and last[0].isupper()


def library_type(name: str) -> str:
    """A library name as the catalogue knows it: through a session attribute, then a typed
    chain (``flask_sqlalchemy.SQLAlchemy.session.query().get`` -> ``sqlalchemy.orm.Query.get``)."""
    return retyped(library_attribute(name))


# Methods of a session whose result ``FACTORIES`` types: on a receiver typed only later,
# by the classifier (``session`` from a factory in another module), the call that made
# the result is kept (``pkg.factory().execute()``) so that ``result.scalars()`` resolves.
SESSION_RESULTS = frozenset({"execute", "scalars", "exec", "query", "stream", "stream_scalars"})
_KNOWN = frozenset({SESSION, ASYNC_SESSION, QUERY, RESULT, SCALARS, UPSERT})
_KNOWN |= frozenset(_BUILDERS)


def typed_method(method: str) -> bool:
    """A method of a session, statement or result whose result ``FACTORIES`` types."""
    return method in _TYPED_METHODS


def known_type(name: str) -> str:
    """``library_type(name)`` when it is a method of a class this module types (a session,
    a statement, a result), "" otherwise."""
    typed = library_type(name)
    return typed if typed.rpartition(".")[0] in _KNOWN else ""


# Attributes whose class the library documents. pathlib: a path's ``parent`` is "the
# logical parent of the path", a path of the same flavour; subprocess: a CompletedProcess's
# ``stdout``/``stderr`` are "the captured output" (str with ``text=True``, else bytes: the
# methods called on either are the same reads).
_ATTRIBUTES = {
    **SESSION_ATTRIBUTES,
    **{f"pathlib.{c}.parent": f"pathlib.{c}" for c in ("Path", "PurePath", "PosixPath")},
    "subprocess.CompletedProcess.stdout": "builtins.str",
    "subprocess.CompletedProcess.stderr": "builtins.str",
}


# Flask-SQLAlchemy's ``SQLAlchemy.__getattr__`` (3.x, ``extension.py``): a public name
# the extension object does not define itself is looked up in ``sqlalchemy`` and then
# ``sqlalchemy.orm`` ("db.select", "db.func", "db.aliased": the docs' "the db object ...
# provides access to the names in sqlalchemy and sqlalchemy.orm"), ``db.event`` is
# ``sqlalchemy.event``, and its ``relationship`` / ``dynamic_loader`` / ``relation`` wrap
# the ORM's with the query class set. The ORM's public names that ``sqlalchemy`` itself
# lacks (SQLAlchemy 2.x) go to ``sqlalchemy.orm``; every other name to ``sqlalchemy``.
_FSA_OWN = frozenset(
    {"Model", "Query", "Table", "session", "metadata", "engine", "engines", "get_engine"}
    | {"get_or_404", "first_or_404", "one_or_404", "paginate", "init_app"}
    | {"create_all", "drop_all", "reflect"}
)
_FSA_ORM = frozenset(
    [
        "add_mapped_attribute",
        "aliased",
        "as_declarative",
        "attribute_keyed_dict",
        "backref",
        "Bundle",
        "class_mapper",
        "clear_mappers",
        "close_all_sessions",
        "column_keyed_dict",
        "column_property",
        "composite",
        "configure_mappers",
        "contains_alias",
        "contains_eager",
        "create_session",
        "declarative_base",
        "declarative_mixin",
        "declared_attr",
        "defaultload",
        "defer",
        "deferred",
        "dynamic_loader",
        "foreign",
        "immediateload",
        "joinedload",
        "keyfunc_mapping",
        "lazyload",
        "Load",
        "load_only",
        "make_transient",
        "make_transient_to_detached",
        "Mapped",
        "mapped_column",
        "mapper",
        "noload",
        "object_mapper",
        "object_session",
        "polymorphic_union",
        "query_expression",
        "raiseload",
        "reconstructor",
        "registry",
        "relationship",
        "remote",
        "scoped_session",
        "selectin_polymorphic",
        "selectinload",
        "Session",
        "sessionmaker",
        "subqueryload",
        "synonym",
        "undefer",
        "undefer_group",
        "validates",
        "was_deleted",
        "with_expression",
        "with_loader_criteria",
        "with_parent",
        "with_polymorphic",
    ]
)
_FSA_RENAMED = {"relation": "sqlalchemy.orm.relationship", "event": "sqlalchemy.event"}
_FSA_CLASSES = ("flask_sqlalchemy.SQLAlchemy", "flask_sqlalchemy.extension.SQLAlchemy")


def _sqlalchemy_name(name: str) -> str:
    """``flask_sqlalchemy.SQLAlchemy.select().where`` -> ``sqlalchemy.select().where``:
    a name the extension object hands on to SQLAlchemy; ``name`` itself otherwise."""
    for cls in _FSA_CLASSES:
        if name.startswith(f"{cls}."):
            rest = name[len(cls) + 1 :]
            head, dot, tail = rest.partition(".")
            attr = head.removesuffix("()")
            if attr in _FSA_OWN or attr.startswith("_") or not attr.isidentifier():
                return name
            called = head[len(attr) :]
            module = "sqlalchemy.orm" if attr in _FSA_ORM else "sqlalchemy"
            moved = _FSA_RENAMED.get(attr, f"{module}.{attr}")
            return f"{moved}{called}{dot}{tail}"
    return name


def library_attribute(name: str) -> str:
    """``flask_sqlalchemy.SQLAlchemy.session.add`` -> ``sqlalchemy.orm.Session.add``,
    ``pathlib.Path.parent.parent.resolve`` -> ``pathlib.Path.resolve``: a name through
    attributes whose class is known, on that class; ``flask_sqlalchemy.SQLAlchemy.func.count``
    -> ``sqlalchemy.func.count``, a name the extension hands on; ``name`` itself otherwise."""
    for _ in range(8):  # each step shortens the name by one attribute
        for prefix, cls in _ATTRIBUTES.items():
            if name.startswith(f"{prefix}."):
                name = f"{cls}{name[len(prefix) :]}"
                break
        else:
            return _sqlalchemy_name(name)
    return name


# HTTP clients: what a request returns, from each library's API reference. requests
# (``requests.readthedocs.io/en/latest/api/``): ``requests.get`` ... and a ``Session``'s
# methods return a ``requests.Response``. httpx (``python-httpx.org/api/``): the module
# functions, ``Client`` and ``AsyncClient`` methods return an ``httpx.Response``
# (``stream`` is used as ``with httpx.stream(...) as response``). aiohttp
# (``docs.aiohttp.org/en/stable/client_reference.html``): a ``ClientSession``'s request
# methods give a ``ClientResponse``, awaited or entered (``async with session.get(u) as
# resp``), as does ``aiohttp.request``. urllib3 2 (``urllib3.readthedocs.io``):
# ``urllib3.request`` and ``PoolManager.request`` / ``urlopen`` return a
# ``BaseHTTPResponse``. ``urllib.request.urlopen`` gives an ``http.client.HTTPResponse``
# for http(s) URLs. What the response's methods do is the catalogue's: reads.
_VERBS = ("request", "get", "head", "options", "post", "put", "patch", "delete")
_URLLIB3 = ("request", "request_encode_url", "request_encode_body", "urlopen")
_REQUESTS_SESSIONS = ("requests.Session", "requests.sessions.Session")
_HTTPX_CLIENTS = ("httpx.Client", "httpx.AsyncClient")
_URLLIB3_POOLS = (
    "urllib3.PoolManager",
    "urllib3.ProxyManager",
    "urllib3.HTTPConnectionPool",
    "urllib3.HTTPSConnectionPool",
)
_Calls = tuple[tuple[str, ...], tuple[str, ...]]  # owners, and the methods of each
_HTTP_CALLS: dict[str, list[_Calls]] = {
    "requests.Response": [
        (("requests", "requests.api", *_REQUESTS_SESSIONS), _VERBS),
        (_REQUESTS_SESSIONS, ("send",)),
    ],
    "httpx.Response": [
        (("httpx", *_HTTPX_CLIENTS), (*_VERBS, "stream")),
        (_HTTPX_CLIENTS, ("send",)),
    ],
    "aiohttp.ClientResponse": [
        (("aiohttp",), ("request",)),
        (("aiohttp.ClientSession", "aiohttp.client.ClientSession"), _VERBS),
    ],
    "urllib3.BaseHTTPResponse": [(("urllib3",), ("request",)), (_URLLIB3_POOLS, _URLLIB3)],
    "http.client.HTTPResponse": [(("urllib.request",), ("urlopen",))],
}
_IMAGE_COPIES = ("convert", "copy", "crop", "rotate", "transpose", "filter", "reduce", "resize")


def _http_responses() -> dict[str, str]:
    return {
        f"{owner}.{method}": response
        for response, groups in _HTTP_CALLS.items()
        for owners, methods in groups
        for owner in owners
        for method in methods
    }


TASK = "asyncio.Task"
FUTURE = "asyncio.Future"
THREAD_FUTURE = "concurrent.futures.Future"
_EXECUTORS = (
    "concurrent.futures.Executor",
    "concurrent.futures.ThreadPoolExecutor",
    "concurrent.futures.ProcessPoolExecutor",
)
# What asyncio and concurrent.futures document their spawn APIs to return: a task, or a
# future (``ensure_future`` hands a future back as it is, ``Task`` is a ``Future``);
# ``current_task()`` "the currently running Task instance, or None".
_FUTURES = {
    "asyncio.current_task": TASK,
    "asyncio.tasks.current_task": TASK,
    "asyncio.create_task": TASK,
    "asyncio.tasks.create_task": TASK,
    f"{EVENT_LOOP}.create_task": TASK,
    "asyncio.TaskGroup.create_task": TASK,
    "asyncio.ensure_future": FUTURE,
    "asyncio.tasks.ensure_future": FUTURE,
    "asyncio.wrap_future": FUTURE,
    f"{EVENT_LOOP}.create_future": FUTURE,
    f"{EVENT_LOOP}.run_in_executor": FUTURE,
    "asyncio.run_coroutine_threadsafe": THREAD_FUTURE,
    **{f"{executor}.submit": THREAD_FUTURE for executor in _EXECUTORS},
}
# asyncio-eventloop.html: call_soon returns an asyncio.Handle, call_later and call_at an
# asyncio.TimerHandle (whose cancel() the catalogue knows)
_HANDLES = {
    f"{EVENT_LOOP}.call_soon": "asyncio.Handle",
    f"{EVENT_LOOP}.call_soon_threadsafe": "asyncio.Handle",
    f"{EVENT_LOOP}.call_later": "asyncio.TimerHandle",
    f"{EVENT_LOOP}.call_at": "asyncio.TimerHandle",
}

# Regular expressions (docs.python.org/3/library/re.html): ``re.compile`` returns a
# ``re.Pattern``; ``re.match``/``search``/``fullmatch`` and a Pattern's methods of those
# names return a ``re.Match`` (or None). The catalogue's ``re.*`` says what each method of
# either class does (nothing outside the value).
_MATCHING = ("match", "search", "fullmatch")
_REGEX = {
    "re.compile": "re.Pattern",
    **{f"re.{m}": "re.Match" for m in _MATCHING},
    **{f"re.Pattern.{m}": "re.Match" for m in _MATCHING},
}

# pathlib (docs.python.org/3/library/pathlib.html): "Path.home(): Return a new path object
# representing the user's home directory", cwd() the same for the working directory, and
# the path arithmetic returns "a new path": a chain (`Path.home().resolve()`) stays a Path.
TRAVERSABLE = "importlib.resources.abc.Traversable"
_PATHS = {
    f"pathlib.Path.{m}": "pathlib.Path"
    for m in (
        *("home", "cwd", "resolve", "absolute", "expanduser", "joinpath"),
        *("with_suffix", "with_name", "with_stem", "relative_to"),
    )
}

# Library calls whose result iterates instances of a known class (``for m in
# PATTERN.finditer(text): m.end()``): re's finditer "Return an iterator yielding Match
# objects"; concurrent.futures.as_completed "Returns an iterator over the Future instances";
# a Path's iterdir, glob and rglob yield "path objects".
ITERATES = {
    "re.finditer": "re.Match",
    "re.Pattern.finditer": "re.Match",
    "concurrent.futures.as_completed": THREAD_FUTURE,
    **{f"pathlib.Path.{m}": "pathlib.Path" for m in ("iterdir", "glob", "rglob")},
}

# Message digests (docs.python.org/3/library/hashlib.html): "Constructors for hash
# algorithms ... return a hash object with the same simple interface" (update, digest,
# hexdigest, copy), as does hashlib.new(name); hmac.new returns an HMAC object of the same
# interface. The catalogue's hashlib.* and hmac.* say what its methods do (nothing outside).
_DIGEST_ALGORITHMS = (
    *("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake2s", "new"),
    *("sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256", "file_digest"),
)
_DIGESTS = {
    **{f"hashlib.{name}": "hashlib._Hash" for name in _DIGEST_ALGORITHMS},
    "hmac.new": "hmac.HMAC",
    # webbrowser.get(): "Return a controller object for the browser type using"
    "webbrowser.get": "webbrowser.BaseBrowser",
}

# socket (docs.python.org/3/library/socket.html): ``socket.socket(...)`` makes a socket
# object; create_connection "Connect to a TCP service ... and return the socket object",
# create_server "Convenience function which creates a TCP socket ... Return the socket
# object", fromfd "Return a socket object", a socket's dup "Duplicate the socket".
_SOCKETS = {
    **{f"socket.{f}": "socket.socket" for f in ("socket", "create_connection", "create_server")},
    **{f"socket.{f}": "socket.socket" for f in ("fromfd", "socket.dup")},
}
# "The slash operator helps create child paths" (pathlib): ``Path(a) / name`` is a Path of
# the same class as its left operand.
PATH_CLASSES = frozenset(
    f"pathlib.{c}" for c in ("Path", "PurePath", "PosixPath", "WindowsPath", "PurePosixPath")
)

# What opens a file (``open(path, "w")``): the open call is the effect, judged by its mode
# (the catalogue's ``builtins.open``); what it returns is a file object (``io.IOBase``),
# whether bound (``f = open(p)``, ``with open(p) as f``) or called on at once
# (``open(p).read()``): its methods are the catalogue's ``io.IOBase.*``.
FILE_TYPE = "io.IOBase"
FILE_OPENERS = frozenset(
    {
        "builtins.open",
        "io.open",
        "codecs.open",
        "gzip.open",
        "bz2.open",
        "lzma.open",
        "os.fdopen",
        "pathlib.Path.open",
    }
    | {"tempfile.NamedTemporaryFile", "tempfile.TemporaryFile"}
)

MP_CONTEXT = "multiprocessing.context.BaseContext"
# Library functions returning an instance of a known class, so that methods called on the
# result resolve to what the effect catalogue matches (``PIL.Image.Image.save``).
FACTORIES = {
    **_FUTURES,
    **_DIGESTS,
    **_HANDLES,
    **_REGEX,
    **_PATHS,
    **_SOCKETS,
    # multiprocessing: get_context(method) "Return a context object which has the same
    # attributes as the multiprocessing module" (its Process, Pool...).
    "multiprocessing.get_context": MP_CONTEXT,
    "multiprocessing.context.BaseContext.get_context": MP_CONTEXT,
    # contextvars: copy_context() "Returns a copy of the current Context object".
    "contextvars.copy_context": "contextvars.Context",
    # numpy's array creation routines (numpy.org/doc "Array creation routines") return an
    # ndarray, whose methods (mean, reshape, tolist...) the catalogue's numpy entries know.
    **{
        f"numpy.{f}": "numpy.ndarray"
        for f in (
            *("array", "asarray", "zeros", "ones", "empty", "full", "arange", "linspace"),
            *("zeros_like", "ones_like", "empty_like", "full_like", "eye", "identity"),
            *("concatenate", "stack", "vstack", "hstack", "frombuffer", "fromiter", "pad"),
        )
    },
    # Templates: Django's get_template / select_template return a backend's Template;
    # Jinja2's Environment returns a jinja2.Template (both render to a string).
    "django.template.loader.get_template": "django.template.backends.django.Template",
    "django.template.loader.select_template": "django.template.backends.django.Template",
    **{
        f"jinja2.Environment.{f}": "jinja2.Template"
        for f in ("get_template", "select_template", "get_or_select_template", "from_string")
    },
    # asyncio-subprocess.html: create_subprocess_exec/_shell return "a Process instance".
    **{
        f"{module}.create_subprocess_{how}": "asyncio.subprocess.Process"
        for module in ("asyncio", "asyncio.subprocess")
        for how in ("exec", "shell")
    },
    "asyncio.get_event_loop": EVENT_LOOP,
    "asyncio.get_running_loop": EVENT_LOOP,
    "asyncio.new_event_loop": EVENT_LOOP,
    "asyncio.events.get_event_loop": EVENT_LOOP,
    "PIL.Image.open": "PIL.Image.Image",
    "PIL.Image.new": "PIL.Image.Image",
    # Pillow: "Returns: An Image object" (a new one; ``img = img.convert("RGB")``).
    **{f"PIL.Image.Image.{m}": "PIL.Image.Image" for m in _IMAGE_COPIES},
    "sqlite3.connect": "sqlite3.Connection",
    # Django's application registry: "get_app_config(app_label): Returns an AppConfig".
    "django.apps.apps.get_app_config": "django.apps.config.AppConfig",
    "django.apps.registry.Apps.get_app_config": "django.apps.config.AppConfig",
    "requests.session": "requests.Session",
    # Django's storage API: open(name, mode) "Opens the file given by name ... the returned
    # file is guaranteed to be a File object" (docs.djangoproject.com, files/storage): its
    # reads are the catalogue's django.core.files.base.File.*; the open's mode is the effect.
    **{
        f"django.core.files.storage.{owner}.open": "django.core.files.base.File"
        for owner in (
            *("default_storage", "Storage", "FileSystemStorage", "InMemoryStorage"),
            *("base.Storage", "filesystem.FileSystemStorage", "memory.InMemoryStorage"),
        )
    },
    # urllib.parse: urlparse's and urlsplit's "return value is a named tuple" (ParseResult,
    # SplitResult; urldefrag a DefragResult, the *b variants of bytes), whose _replace and
    # geturl make new values: the catalogue's urllib.parse.* (nothing outside the value).
    **{
        f"urllib.parse.{f}": f"urllib.parse.{made}"
        for f, made in (
            *(("urlparse", "ParseResult"), ("urlsplit", "SplitResult")),
            *(("urldefrag", "DefragResult"),),
        )
    },
    # A named tuple's _replace "Return[s] a new instance of the named tuple replacing
    # specified fields with new values" (collections.namedtuple): the same class.
    **{
        f"urllib.parse.{made}._replace": f"urllib.parse.{made}"
        for made in ("ParseResult", "SplitResult", "DefragResult")
    },
    # importlib.resources.files(anchor) "Returns a Traversable object representing the
    # resource container"; a Traversable's joinpath "Return Traversable child in self"
    # (importlib.resources.abc). What it reads is the catalogue's importlib.resources.*.
    # prometheus_client: a metric's labels(...) "returns the child" time series, a metric
    # of the same kind, whose inc / set / observe the catalogue's prometheus_client.* know.
    **{
        f"prometheus_client.{module}{metric}.labels": f"prometheus_client.{metric}"
        for module in ("", "metrics.")
        for metric in ("Counter", "Gauge", "Summary", "Histogram", "Info", "Enum")
    },
    # Pillow's ImageOps: each of these "Returns: An image" (pillow.readthedocs.io, ImageOps).
    **{
        f"PIL.ImageOps.{f}": "PIL.Image.Image"
        for f in (
            *("autocontrast", "colorize", "contain", "cover", "crop", "scale", "deform"),
            *("equalize", "expand", "fit", "flip", "grayscale", "invert", "mirror", "pad"),
            *("posterize", "solarize", "exif_transpose"),
        )
    },
    # random: getrandbits(k) "Returns a non-negative Python integer with k random bits".
    "random.getrandbits": "builtins.int",
    "random.Random.getrandbits": "builtins.int",
    "importlib.resources.files": TRAVERSABLE,
    f"{TRAVERSABLE}.joinpath": TRAVERSABLE,
    **_sqlalchemy(),
    **_http_responses(),
}
_TYPED_METHODS = frozenset(
    key.rpartition(".")[2] for key, made in FACTORIES.items() if made in _KNOWN and "." in key
)

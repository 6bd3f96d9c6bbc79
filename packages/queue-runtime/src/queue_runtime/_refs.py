"""Model instances by reference: Django and SQLAlchemy rows as (model, primary key).

Neither framework is a dependency. A value is recognised only when its
framework is already imported (``sys.modules``), so an app without Django
never imports it here; reading a reference back imports what the tag names.
The worker reads the row again: unsaved changes of the caller's instance are
not carried. A row that is gone raises :class:`ReferenceGone` (retried).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from queue_runtime.errors import ConfigError, PayloadError, ReferenceGone, Unencodable

SessionFactory = Callable[[], Any]  # returns the current SQLAlchemy Session (or scoped_session)
_sessions: list[SessionFactory] = []


def type_name(value: Any) -> str:
    kind = value if isinstance(value, type) else type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _unsaved(value: Any, what: str) -> Unencodable:
    name = type_name(value)
    reason = f"unsaved {what} instance (no primary key yet): save it before enqueueing"
    return Unencodable(f"{name}: {reason}", name, reason)


# -- Django ------------------------------------------------------------------


def lazy_text(value: Any) -> str | None:
    """A Django lazy string (``gettext_lazy``) forced in the active language; None: not one."""
    functional = sys.modules.get("django.utils.functional")
    if functional is not None and isinstance(value, functional.Promise):
        return str(value)
    return None


def safe_text(value: Any) -> str | None:
    """The plain text of a Django safe string (``SafeString``: a rendered template,
    ``format_html``, ``mark_safe``); None: not one."""
    safestring = sys.modules.get("django.utils.safestring")
    if safestring is not None and isinstance(value, safestring.SafeData) and isinstance(value, str):
        return str.__str__(value)  # SafeString.__str__ returns the SafeString itself
    return None


def load_safe_text(text: str) -> Any:
    """A stored safe string, marked safe again (the worker's template does not escape it)."""
    try:
        from django.utils.safestring import mark_safe
    except ImportError as exc:
        raise PayloadError(
            f"a Django safe string, but Django is not installed here: {exc}"
        ) from exc
    return mark_safe(text)


def markup_text(value: Any) -> str | None:
    """The plain text of a ``markupsafe.Markup`` (Flask's and Jinja's safe string)."""
    markupsafe = sys.modules.get("markupsafe")
    if markupsafe is not None and isinstance(value, markupsafe.Markup):
        return str.__str__(value)
    return None


def load_markup(text: str) -> Any:
    """A stored ``Markup``, safe again (Jinja in the worker does not escape it)."""
    try:
        from markupsafe import Markup
    except ImportError as exc:
        raise PayloadError(f"a Markup string, but markupsafe is not installed here: {exc}") from exc
    return Markup(text)


def django_instance(value: Any) -> tuple[str, Any] | None:
    """``(app_label.ModelName, pk)`` of a saved Django model instance; None: not one."""
    models = sys.modules.get("django.db.models")
    if models is None or not isinstance(value, models.Model):
        return None
    if value.pk is None:
        raise _unsaved(value, "Django model")
    return value._meta.label, value.pk


def django_class(value: Any) -> str | None:
    """``app_label.ModelName`` of a Django model class (a signal's ``sender``); None: not one."""
    models = sys.modules.get("django.db.models")
    if models is None or not isinstance(value, type) or not issubclass(value, models.Model):
        return None
    model: Any = value
    return str(model._meta.label)


SNAPSHOT = "_queue_runtime_snapshot"  # on a marked instance: (label, db, {attname: value})


def snapshot(instance: Any) -> Any:
    """Mark a Django instance to travel BY VALUE, its field values read now; returns it.

    For a row being deleted (a ``post_delete`` receiver): the worker could not read it
    again. Each concrete field's value (``attname``: ``author_id``, a file field's name)
    is copied at this call, before Django clears the primary key after the delete; a
    deferred field is left out. Anything that is not a Django instance is returned as is.
    """
    models = sys.modules.get("django.db.models")
    if models is None or not isinstance(instance, models.Model):
        return instance
    values = {f.attname: _field_value(instance, f) for f in _loaded_fields(instance)}
    instance.__dict__[SNAPSHOT] = (instance._meta.label, instance._state.db, values)
    return instance


def _loaded_fields(instance: Any) -> list[Any]:
    deferred = instance.get_deferred_fields()
    return [f for f in instance._meta.concrete_fields if f.attname not in deferred]


def _field_value(instance: Any, field: Any) -> Any:
    value = getattr(instance, field.attname)
    files = sys.modules.get("django.db.models.fields.files")
    if files is not None and isinstance(value, files.FieldFile):
        return value.name  # the file by its name in the storage
    return value


def django_snapshot(value: Any) -> tuple[str, str | None, dict[str, Any]] | None:
    """``(label, database alias, {attname: value})`` of an instance marked by :func:`snapshot`."""
    models = sys.modules.get("django.db.models")
    if models is None or not isinstance(value, models.Model):
        return None
    found: tuple[str, str | None, dict[str, Any]] | None = value.__dict__.get(SNAPSHOT)
    return found


def load_django_snapshot(label: str, db: str | None, values: dict[str, Any]) -> Any:
    """An unsaved instance built from the stored values, marked as read from ``db``."""
    instance = load_django_class(label)(**values)
    instance._state.adding = False
    instance._state.db = db
    return instance


def load_django_class(label: str) -> Any:
    from django.apps import apps

    try:
        return apps.get_model(label)
    except (LookupError, ValueError) as exc:
        raise PayloadError(f"no Django model {label!r}: {exc}") from exc


def load_django_instance(label: str, pk: Any) -> Any:
    model = load_django_class(label)
    try:
        return model._default_manager.get(pk=pk)
    except model.DoesNotExist as exc:
        raise ReferenceGone(f"{label} pk={pk!r} no longer exists") from exc


# -- SQLAlchemy (and Flask-SQLAlchemy) ----------------------------------------


def sqlalchemy_session(factory: SessionFactory | None) -> None:
    """Register how the worker (and after-commit enqueue) finds the current SQLAlchemy session.

    ``factory()`` returns the session of the current thread: a ``scoped_session``
    (or Flask-SQLAlchemy's ``lambda: db.session``). The last registration wins.
    Registering also installs the session events of after-commit enqueue;
    ``None`` unregisters.
    """
    if factory is None:
        _sessions.clear()
        return
    _install_events()
    _sessions[:] = [factory]


WROTE = "queue_runtime.wrote"  # session.info: this transaction flushed writes
PENDING = "queue_runtime.after_commit"  # session.info: [(write, drop)] waiting for the commit
Hook = tuple[Callable[[], None], Callable[[], None]]
_installed: list[bool] = []


def _install_events() -> None:
    if _installed:
        return
    from sqlalchemy import event
    from sqlalchemy.orm import Session

    event.listen(Session, "after_flush", _flushed)
    event.listen(Session, "after_commit", _committed)
    event.listen(Session, "after_transaction_end", _ended)
    _installed.append(True)


def _flushed(session: Any, _context: Any) -> None:
    session.info[WROTE] = True


def _committed(session: Any) -> None:
    for write, _drop in session.info.pop(PENDING, []):
        write()


def _ended(session: Any, transaction: Any) -> None:
    if transaction.parent is not None:  # a savepoint or subtransaction: the root decides
        return
    session.info.pop(WROTE, None)
    for _write, drop in session.info.pop(PENDING, []):
        drop()  # not committed (rolled back or closed): never written


def sqlalchemy_writing() -> Any | None:
    """The registered session when its transaction has written something; None otherwise
    (no session, no transaction, or only reads: the rows a worker reads are committed)."""
    session = current_session()
    if session is None or not session.in_transaction():
        return None
    if session.info.get(WROTE) or session.new or session.dirty or session.deleted:
        return session
    return None


def sqlalchemy_on_commit(session: Any, write: Callable[[], None], drop: Callable[[], None]) -> None:
    """Run ``write`` after the session's commit, ``drop`` when its transaction ends without one."""
    session.info.setdefault(PENDING, []).append((write, drop))


def django_atomic() -> Any | None:
    """Django's default connection when inside an ``atomic`` block; None otherwise (also
    when Django is not loaded or configured, and inside a ``TestCase``: its transaction is
    never committed, so a deferred enqueue would never be stored)."""
    db, conf = sys.modules.get("django.db"), sys.modules.get("django.conf")
    if db is None or conf is None or not conf.settings.configured:
        return None
    connection = db.connection
    if not connection.in_atomic_block:
        return None
    if _in_testcase(connection):
        return None  # a TestCase never commits: immediate, as before the move
    return connection


def _in_testcase(connection: Any) -> bool:
    """Whether a Django ``TestCase`` holds the transaction: its blocks say so (Django 4.1+);
    older Django keeps no such record, so under its test environment (Django's runner,
    pytest-django) an open transaction is taken for a TestCase's."""
    blocks = getattr(connection, "atomic_blocks", None)
    if blocks and any(getattr(block, "_from_testcase", False) for block in blocks):
        return True
    if blocks and hasattr(blocks[0], "_from_testcase"):
        return False
    utils = sys.modules.get("django.test.utils")
    return utils is not None and hasattr(utils._TestState, "saved_data")


def django_on_commit(connection: Any, write: Callable[[], None]) -> Callable[[], bool]:
    """Run ``write`` at the commit (``transaction.on_commit``; dropped on rollback); returns
    a probe: whether it is still waiting."""
    from django.db import transaction

    transaction.on_commit(write)
    return lambda: any(hook[1] is write for hook in connection.run_on_commit)


def current_session() -> Any | None:
    """The registered session factory's session; None when none is registered.

    A factory that returns a ``scoped_session`` itself (Flask-SQLAlchemy's documented
    ``lambda: db.session``) gives that thread's ``Session``: before SQLAlchemy 2.1 the
    proxy has no ``in_transaction()``, and every enqueue raised ``AttributeError``.
    """
    if not _sessions:
        return None
    session = _sessions[0]()
    from sqlalchemy.orm import scoped_session

    return session() if isinstance(session, scoped_session) else session


def sqlalchemy_instance(value: Any) -> tuple[type, list[Any]] | None:
    """``(mapped class, primary key identity)`` of a persistent mapped instance; None: not one."""
    orm = sys.modules.get("sqlalchemy.orm")
    if orm is None or isinstance(value, type):
        return None
    from sqlalchemy import inspect

    state = inspect(value, raiseerr=False)
    if not isinstance(state, orm.InstanceState):
        return None
    if state.identity is None:  # transient or pending: not flushed, no primary key
        raise _unsaved(value, "SQLAlchemy")
    return type(value), list(state.identity)


def is_mapped_class(cls: Any) -> bool:
    from sqlalchemy import inspect
    from sqlalchemy.orm import Mapper

    return isinstance(inspect(cls, raiseerr=False), Mapper)


def load_sqlalchemy_instance(cls: type, identity: list[Any]) -> Any:
    session = current_session()
    if session is None:
        raise ConfigError(
            f"{type_name(cls)} passed by reference, but no session is registered: call "
            "queue_runtime.codecs.sqlalchemy_session(factory) when the app starts"
        )
    found = session.get(cls, identity[0] if len(identity) == 1 else tuple(identity))
    if found is None:
        raise ReferenceGone(f"{type_name(cls)} pk={identity!r} no longer exists")
    return found

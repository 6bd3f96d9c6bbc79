"""ORM models the codemods recognise: Django models and Flask-SQLAlchemy ``db.Model`` subclasses.

Read from declarations only: a class is a model when it derives (through the
project's own classes) from ``django.db.models.Model`` or from the ``Model``
of an object bound to ``SQLAlchemy(...)``; a load (``Order.objects.get(...)``,
``Project.query.get(...)``, ``db.session.get(Project, ...)``) says which model
an expression holds. Such an argument crosses by the runtime's model codec (a
typed reference, read again in the worker). :class:`ModelKey` says which
attributes of an instance hold its primary key (``order.pk``, ``project.id``:
plain data when the key is provably an integer or a string).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import StrEnum

from codemods._resolve import Where, derives, resolve_expr

# Django's own user models: documented with the default integer ``id``.
_DJANGO_USERS = (
    "django.contrib.auth.models.User",
    "django.contrib.auth.models.AbstractUser",
    "django.contrib.auth.base_user.AbstractBaseUser",
)
_DJANGO_BASES = ("django.db.models.Model", "django.db.models.base.Model", *_DJANGO_USERS)
_DJANGO_LOADS = frozenset({"get", "create", "first", "last", "latest", "earliest", "get_or_none"})
_DJANGO_INT_FIELDS = (
    "AutoField",
    "BigAutoField",
    "SmallAutoField",
    "IntegerField",
    "BigIntegerField",
)
_SQLALCHEMY = frozenset({"flask_sqlalchemy.SQLAlchemy", "flask_sqlalchemy.extension.SQLAlchemy"})
# The query methods that give back one instance; a chain (filter_by(...).first()) ends in one.
_QUERY_LOADS = frozenset({"get", "get_or_404", "first", "first_or_404", "one", "one_or_none"})
_SESSION_LOADS = frozenset({"get", "get_or_404"})  # db.session.get(M, k), db.get_or_404(M, k)
_SA_INT_TYPES = ("Integer", "BigInteger", "SmallInteger")
_SA_STR_TYPES = ("String", "Unicode", "Text", "UnicodeText")


class Orm(StrEnum):
    DJANGO = "django"
    SQLALCHEMY = "sqlalchemy"  # Flask-SQLAlchemy: the session is ``<db>.session``


@dataclass(frozen=True)
class ModelKey:
    """A model whose primary key is an integer or a string: what the caller passes, how the
    worker re-fetches."""

    orm: Orm
    model: str  # the dotted class
    attr: str  # ``pk`` (Django), the primary-key column (SQLAlchemy)
    db: str = ""  # SQLAlchemy: the dotted ``SQLAlchemy()`` object
    type: str = "int"  # the key's Python type: ``int`` or ``str``

    @property
    def readable(self) -> tuple[str, ...]:
        """Attributes of an instance that hold the key (``order.pk``, ``order.id``)."""
        return ("pk", "id") if self.orm is Orm.DJANGO else (self.attr,)


def model_orm(qualname: str, where: Where) -> Orm | None:
    if any(derives(qualname, base, where) for base in _DJANGO_BASES):
        return Orm.DJANGO
    return Orm.SQLALCHEMY if sqlalchemy_db(qualname, where) else None


def is_model(qualname: str, where: Where) -> bool:
    return model_orm(qualname, where) is not None


def model_key(model: str, where: Where) -> ModelKey | None:
    """The model's key, or None when the key is not provably an integer or a string."""
    orm = model_orm(model, where)
    if orm is Orm.DJANGO:
        return ModelKey(orm, model, "pk") if _django_int_key(model, where) else None
    db = sqlalchemy_db(model, where)
    column = _sqlalchemy_key(model, where) if db else None
    return ModelKey(Orm.SQLALCHEMY, model, column[0], db, column[1]) if db and column else None


def orm_load(node: ast.Call, where: Where) -> str:
    """The model an ORM load returns an instance of, else ""."""
    dotted = resolve_expr(node.func, where) or ""
    if dotted == "django.shortcuts.get_object_or_404" and node.args:
        return _model_arg(node, where)
    head, _, method = dotted.rpartition(".")
    for manager in (".objects", "._default_manager"):
        if method in _DJANGO_LOADS and head.endswith(manager):
            model = head.removesuffix(manager)
            return model if is_model(model, where) else ""
    return _query_load(node, where) or _session_load(node, dotted, where)


def _model_arg(node: ast.Call, where: Where) -> str:
    model = (resolve_expr(node.args[0], where) or "") if node.args else ""
    return model if is_model(model, where) else ""


def _query_load(node: ast.Call, where: Where) -> str:
    """``Model.query.get(k)``, ``Model.query.filter_by(...).first()``."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in _QUERY_LOADS:
        return ""
    inner = func.value
    while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
        inner = inner.func.value  # back along filter_by(...).order_by(...)
    if not (isinstance(inner, ast.Attribute) and inner.attr == "query"):
        return ""
    model = resolve_expr(inner.value, where) or ""
    return model if sqlalchemy_db(model, where) else ""


def _session_load(node: ast.Call, dotted: str, where: Where) -> str:
    """``db.session.get(Model, k)``, ``db.get_or_404(Model, k)`` on the model's own ``db``."""
    head, _, method = dotted.rpartition(".")
    if method not in _SESSION_LOADS or not node.args:
        return ""
    model = _model_arg(node, where)
    db = sqlalchemy_db(model, where) if model else None
    return model if db and head in (db, f"{db}.session") else ""


def sqlalchemy_db(qualname: str, where: Where, depth: int = 0) -> str | None:
    """The dotted ``SQLAlchemy()`` object whose ``Model`` the class derives from, else None."""
    found = where.project.lookup(qualname) if depth < 8 else None
    if found is None or found[1] not in found[0].classes:
        return None
    inside = Where(where.project, found[0])
    for node in found[0].classes[found[1]].bases:
        dotted = resolve_expr(node, inside) or ""
        head, _, last = dotted.rpartition(".")
        if last == "Model" and _is_sqlalchemy_object(head, where):
            return head
        parent = sqlalchemy_db(dotted, where, depth + 1) if dotted else None
        if parent:
            return parent
    return None


def _is_sqlalchemy_object(dotted: str, where: Where) -> bool:
    found = where.project.lookup(dotted) if dotted else None
    value = found[0].assignments.get(found[1]) if found else None
    if found is None or not isinstance(value, ast.Call):
        return False
    return resolve_expr(value.func, Where(where.project, found[0])) in _SQLALCHEMY


def _django_int_key(model: str, where: Where) -> bool:
    """Django's default ``id`` (an auto field), or a declared integer primary key."""
    if model in _DJANGO_USERS:
        return True
    found = where.project.lookup(model)
    if found is None or found[1] not in found[0].classes:
        return False
    for stmt in found[0].classes[found[1]].body:
        value = _primary_key_call(stmt)
        if value is not None:
            return _callee(value).endswith(_DJANGO_INT_FIELDS)
    return True


def _sqlalchemy_key(model: str, where: Where) -> tuple[str, str] | None:
    """``(column, type)`` of the column declared ``primary_key=True`` with an integer or a
    string type (SQLAlchemy has no default)."""
    found = where.project.lookup(model)
    if found is None or found[1] not in found[0].classes:
        return None
    for stmt in found[0].classes[found[1]].body:
        value = _primary_key_call(stmt)
        target: ast.expr | None = stmt.target if isinstance(stmt, ast.AnnAssign) else None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
        if value is None or not isinstance(target, ast.Name):
            continue
        types = [
            _callee(a) for a in value.args if isinstance(a, ast.Name | ast.Attribute | ast.Call)
        ]
        hint = ast.unparse(stmt.annotation) if isinstance(stmt, ast.AnnAssign) else ""
        if hint == "Mapped[int]" or any(t.endswith(_SA_INT_TYPES) for t in types):
            return target.id, "int"
        if hint == "Mapped[str]" or any(t.endswith(_SA_STR_TYPES) for t in types):
            return target.id, "str"
        return None
    return None


def _primary_key_call(stmt: ast.stmt) -> ast.Call | None:
    value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
    if not isinstance(value, ast.Call):
        return None
    flagged = any(
        k.arg == "primary_key" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in value.keywords
    )
    return value if flagged else None


def _callee(node: ast.Call | ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    return func.attr if isinstance(func, ast.Attribute) else ast.unparse(func)

"""Statements built by a function of another module: ``session.execute(build(uid))``.

The extractor types an argument when its own file says what it holds (``stmt =
select(User).where(...)``, a helper of the same file returning one). A statement made by a
helper of another module is kept as the name of that call (``pkg.queries.build()``, with
the generative methods applied to it after: ``pkg.queries.build().order_by()``, see
``_extract/_calls.argument_types``). Here the index reads what the helper returns (its
``-> Select`` annotation, or the statement every ``return`` builds: the summary's
``assignments``) and the generative methods keep its kind (``_extract/_library``), so the
catalogue's ``type_matches`` conditions see ``sqlalchemy.sql.Select`` as they would for a
statement built in place. Anything else stays as it was: untyped for the catalogue.
"""

from __future__ import annotations

from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._extract._library import NARROWING, STATEMENTS, retyped, statement_class
from inventory._extract.values._values import HANDED
from inventory.summary import CallInfo

_MAX_HANDED = 8  # helpers handing the statement on to helpers
_PROBE = "__statement__"  # a member no class has: what resolving ``name.<probe>`` lands on


def with_statement_types(call: CallInfo, index: SymbolIndex) -> CallInfo:
    """``call`` with each deferred argument type (``pkg.f()...``) replaced by the statement
    class it names, or "" when it names none; ``call`` itself when it has none."""
    if not any("()" in t for t in call.arg_types):
        return call
    types = [statement_of(t, index) if "()" in t else t for t in call.arg_types]
    return call.model_copy(update={"arg_types": types})


def statement_of(name: str, index: SymbolIndex, depth: int = 0) -> str:
    """``pkg.queries.build().where()`` -> ``sqlalchemy.sql.Select`` when ``build`` returns a
    select statement; ``pkg.paginate().limit()@0=sqlalchemy.sql.Select`` -> the same when
    ``paginate`` returns the statement handed to it first (``narrowing_helpers``); "" when
    the index does not know a statement there."""
    name, _, passed = name.partition(HANDED)
    found = _returned(name, index)
    if found or not passed or depth > _MAX_HANDED:
        return found
    position, _, handed = passed.partition("=")
    call, _, chain = name.partition("()")
    if not position.isdigit() or not _narrowing_chain(chain):
        return ""
    if _narrowed_position(call, index) != int(position):
        return ""
    return handed if handed in STATEMENTS else statement_of(handed, index, depth + 1)


def _narrowing_chain(chain: str) -> bool:
    """``.limit().where()`` (or nothing): generative methods that keep the statement's kind."""
    methods = [m.removesuffix("()") for m in chain.split(".") if m]
    return all(m in NARROWING for m in methods) and all(
        p.endswith("()") for p in chain.split(".")[1:]
    )


def _narrowed_position(function: str, index: SymbolIndex) -> int | None:
    found = index.resolve(function)
    summary = index.home.get(found.name) if found.kind is SymbolKind.FUNCTION else None
    if summary is None:
        return None
    return summary.narrowing_helpers.get(found.name.removeprefix(f"{summary.module}."))


def _returned(name: str, index: SymbolIndex) -> str:
    found = index.resolve(f"{name}.{_PROBE}")
    if found.kind not in (SymbolKind.EXTERNAL, SymbolKind.MEMBER):
        return ""
    if not found.name.endswith(f".{_PROBE}"):
        return ""
    head, _, rest = found.name.partition("().")  # ``sqlalchemy.Select.where``, ``<probe>``
    owner, _, method = head.rpartition(".")
    if rest and statement_class(owner) != owner:  # as annotated: ``-> "Select"``
        head = f"{statement_class(owner)}.{method}"
    name = f"{head}().{rest}" if rest else head
    typed = retyped(name)  # ``sqlalchemy.sql.Select.where().<probe>`` -> ``...Select.<probe>``
    made = statement_class(typed.removesuffix(f".{_PROBE}"))
    return made if made in STATEMENTS else ""

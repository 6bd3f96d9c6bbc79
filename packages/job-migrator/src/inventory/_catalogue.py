"""The effect catalogue: load the shipped TOML, merge user additions, match calls.

What an API does is data (``inventory/catalogue.toml``), not code: this module
only knows how to read entries and test one call against them. The format is
documented in the header of the TOML file.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from inventory.models import EffectKind
from inventory.summary import CallInfo

_EXPR = "<expr>"
_ANY_ARG = "*"
_SUFFIX = "?."
_GLOB = re.compile(r"[*?\[]")
_Glob = tuple[int, str, str, re.Pattern[str]]  # catalogue position, literal head, tail, regex
_Literal = str | int | float | bool | None


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from exc
    return pattern


def glob_regex(pattern: str) -> str:
    """The regex of a catalogue glob: fnmatch's ``*``, ``?`` and ``[...]``, except that a
    wildcard does not cross a call's result unless the entry spells one.

    A resolved target names each call it goes through: ``typing.cast().run`` is the
    ``run`` of what ``cast`` handed back (``_extract/_resolve.py``). fnmatch's ``*``
    matches anything, so the pure glob ``typing.[a-z_]*`` read ``typing.cast().run``, a job's
    own method, as pure, and ``copy.*`` did the same to ``copy.copy(job).run()``. Here
    ``*`` and ``?`` stop at ``(`` and ``)``: ``json.*`` is every function of ``json``, not
    what ``json.loads()`` returns. An entry about what a call returns says so with ``()``
    (``sqlalchemy.select().*``); after the last ``()`` it spells, its wildcards go on through
    further calls (a builder's chain, ``select().where().order_by``) as the entry means.
    """
    chained = pattern.rfind("()")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        free = chained >= 0 and i > chained  # after the last "()" the entry spells
        if char == "*":
            out.append(".*" if free else "[^()]*")
        elif char == "?":
            out.append("." if free else "[^()]")
        elif char == "[" and (close := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1 : close]
            negated = body.startswith("!")
            body = body[1:] if negated else body
            out.append(f"[{'^' if negated else ''}{body.replace(chr(92), chr(92) * 2)}]")
            i = close
        else:
            out.append(re.escape(char))
        i += 1
    return "(?s:" + "".join(out) + r")\Z"


# Checked when the catalogue is read, so a typo in pyproject.toml is a config error.
Regex = Annotated[str, AfterValidator(_compiles)]
_LIKE = (
    "The `call` of another entry of the same table whose conditions (and effect) this one "
    "takes when it has none of its own: `os.fdopen` is judged by its mode as `open` is."
)


class Condition(BaseModel):
    """``[[pure.when]]``: a condition on one argument (``arg`` and ``kwarg`` together: the
    argument given either way, as ``open``'s mode)."""

    model_config = ConfigDict(extra="forbid")

    arg: int | None = None
    kwarg: str | None = Field(default=None, description="A keyword name, or '*' for any argument.")
    matches: Regex | None = None
    equals: _Literal = None
    present: bool | None = None
    type_matches: Regex | None = Field(
        default=None,
        description="Regex on the class of a positional argument that is a name of a known "
        "class (``session.execute(stmt)`` after ``stmt = select(User)``).",
    )

    @model_validator(mode="after")
    def _says_what_to_test(self) -> Condition:
        # A condition that can never hold would silently do nothing.
        if self.arg is None and self.kwarg is None:
            raise ValueError("a [[effect.when]] needs `arg` or `kwarg`")
        tests = (self.matches, self.present, self.type_matches)
        if all(t is None for t in tests) and "equals" not in self.model_fields_set:
            raise ValueError(
                "a [[effect.when]] needs `matches`, `equals`, `present` or `type_matches`"
            )
        if self.type_matches is not None and self.arg is None:
            raise ValueError("`type_matches` tests a positional argument: it needs `arg`")
        return self


class Refinement(Condition):
    """``[[effect.when]]``: a condition on one argument that changes the effect."""

    effect: EffectKind


class EffectEntry(BaseModel):
    """``[[effect]]``: one call pattern and the effect it has."""

    model_config = ConfigDict(extra="forbid")

    call: str
    effect: EffectKind | None = None
    keyed_by: str | None = None
    key_matches: Regex | None = Field(
        default=None, description="Regex the keyed_by argument's source must match (a header name)."
    )
    receiver: Regex | None = None
    sql_arg: int | None = None
    when: list[Refinement] = Field(default_factory=list)
    like: str | None = Field(default=None, description=_LIKE)

    @property
    def is_suffix(self) -> bool:
        return self.call.startswith(_SUFFIX)


class KeywordEntry(BaseModel):
    """``[[keyword]]``: money words on payment-ish receivers, domain methods named for money."""

    model_config = ConfigDict(extra="forbid")

    name: Regex
    receiver: Regex
    effect: EffectKind
    keyed_by: str | None = None
    why: str = Field(default="", description="The reason a reviewer reads in the evidence.")
    follow: bool = Field(
        default=False,
        description="The name is evidence, not all the call does: still follow its callee.",
    )


class AugassignEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attr: Regex
    effect: EffectKind


class SqlRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    matches: Regex
    effect: EffectKind


class PureEntry(BaseModel):
    """``[[pure]]``: calls known to have no effect a retry could repeat (the soundness rule
    needs every reached call explained: by its source, an effect entry, or one of these)."""

    model_config = ConfigDict(extra="forbid")

    call: str = Field(
        description="Exact dotted name or glob; '?.meth' for a receiver of unknown type."
    )
    receiver: Regex | None = Field(
        default=None, description="For '?.' entries: regex the receiver as written must match."
    )
    when: list[Condition] = Field(
        default_factory=list,
        description="For exact names: pure only when one of these holds (open's read modes).",
    )
    like: str | None = Field(default=None, description=_LIKE)

    @property
    def is_suffix(self) -> bool:
        return self.call.startswith(_SUFFIX)


class CatalogueSpec(BaseModel):
    """The whole catalogue as written in TOML (shipped file or ``[tool.migrator.catalogue]``)."""

    model_config = ConfigDict(extra="forbid")

    effect: list[EffectEntry] = Field(default_factory=list)
    pure: list[PureEntry] = Field(default_factory=list)
    keyword: list[KeywordEntry] = Field(default_factory=list)
    augassign: list[AugassignEntry] = Field(default_factory=list)
    sql: list[SqlRule] = Field(default_factory=list)


@dataclass(frozen=True)
class CallMatch:
    """What the catalogue says about one call."""

    kind: EffectKind
    api: str
    keyed_by: str | None
    exact: bool  # an exact dotted entry, as opposed to a suffix or keyword heuristic
    key_matches: str | None = None
    # The source of a ``sql_arg`` that is no literal and no SQL rule classifies (``sql``
    # in ``cursor.execute(sql)``): the effect given is the entry's default, a guess.
    sql_unknown: str | None = None
    # A ``?.method`` entry with no receiver hint: the method's name alone decided.
    by_name: bool = False
    detail: str = ""  # why a [[keyword]] rule calls it what it is, for the evidence
    follow: bool = False  # a [[keyword]] rule that adds evidence but does not stand for the call


@cache
def load_shipped() -> CatalogueSpec:
    """The shipped catalogue, read once per process (a config's ``like`` check and the
    scan's catalogue both ask for it; nothing changes the returned spec in place)."""
    text = resources.files("inventory").joinpath("catalogue.toml").read_text(encoding="utf-8")
    return CatalogueSpec.model_validate(tomllib.loads(text))


def resolve_likes(spec: CatalogueSpec) -> CatalogueSpec:
    """Each entry with ``like`` completed from the first entry of its table whose ``call``
    that is (one that has no ``like`` itself). ValueError when there is none."""
    effects = _completed(
        spec.effect,
        "[[effect]]",
        lambda entry, model: {
            "when": entry.when or model.when,
            "effect": entry.effect or model.effect,
        },
    )
    pures = _completed(
        spec.pure, "[[pure]]", lambda entry, model: {"when": entry.when or model.when}
    )
    return spec.model_copy(update={"effect": effects, "pure": pures})


_Entry = TypeVar("_Entry", EffectEntry, PureEntry)


def _completed(
    entries: list[_Entry], table: str, taken: Callable[[_Entry, _Entry], dict[str, Any]]
) -> list[_Entry]:
    models: dict[str, _Entry] = {}
    for entry in entries:
        if entry.like is None:
            models.setdefault(entry.call, entry)
    completed = []
    for entry in entries:
        if entry.like is not None:
            model = models.get(entry.like)
            if model is None:
                raise ValueError(
                    f"{table} {entry.call!r}: like = {entry.like!r} names no entry of that table"
                )
            entry = entry.model_copy(update=taken(entry, model))
        completed.append(entry)
    return completed


def merge(shipped: CatalogueSpec, user: CatalogueSpec) -> CatalogueSpec:
    """User entries are tried first; a user entry with a shipped ``call`` replaces it."""
    overridden = {entry.call for entry in user.effect}
    kept = [entry for entry in shipped.effect if entry.call not in overridden]
    return CatalogueSpec(
        effect=[*user.effect, *kept],
        pure=[*user.pure, *shipped.pure],
        keyword=[*user.keyword, *shipped.keyword],
        augassign=[*user.augassign, *shipped.augassign],
        sql=[*user.sql, *shipped.sql],
    )


class Catalogue:
    """A merged catalogue with its regexes compiled once."""

    def __init__(self, spec: CatalogueSpec) -> None:
        spec = resolve_likes(spec)
        self.spec = spec
        exact = [e for e in spec.effect if not e.is_suffix]
        # Indexed because the classifier asks once per call in the reachable code.
        self._literal: dict[str, int] = {}
        for position, entry in enumerate(exact):
            self._literal.setdefault(entry.call, position)
        self._exact = exact
        # Each glob with its literal head and tail (the text before its first wildcard and
        # after its last): a target is only matched against globs it starts and ends like.
        # Bucketed by the head's first dotted name when the head holds a whole one
        # (``django.core.*``), and by the tail's last one when the tail holds a whole one
        # (``*.send_messages``): a target is only tried against its own buckets and the
        # rest (scanning Django itself, each of its 15,000 functions was tried against all
        # 137 ``django.*`` globs).
        self._globs: dict[tuple[str | None, str | None], list[_Glob]] = {}
        for i, e in enumerate(exact):
            if _GLOB.search(e.call):
                head = _GLOB.split(e.call, 1)[0]
                tail = re.split(r"[*?\]]", e.call)[-1]
                first = head.split(".", 1)[0] if "." in head else None
                last = tail.rsplit(".", 1)[1] if "." in tail else None
                glob = (i, head, tail, re.compile(glob_regex(e.call)))
                self._globs.setdefault((first, last), []).append(glob)
        self._by_method: dict[str, list[EffectEntry]] = {}
        for entry in spec.effect:
            if entry.is_suffix:
                self._by_method.setdefault(entry.call.rsplit(".", 1)[-1], []).append(entry)
        self._exact_memo: dict[str, EffectEntry | None] = {}
        self._pure = _PureIndex(spec.pure)
        self._typed: Callable[[CallInfo], CallInfo] | None = None

    def typing_arguments(self, typed: Callable[[CallInfo], CallInfo]) -> Catalogue:
        """This catalogue, with ``typed`` completing each call's argument types before its
        conditions are tested: the classifier types a statement a helper of another module
        returns (``session.execute(build(uid))``, ``_classify/_statements.py``)."""
        found = copy.copy(self)
        found._typed = typed
        return found

    def _with_types(self, call: CallInfo) -> CallInfo:
        return call if self._typed is None else self._typed(call)

    def _exact_entry(self, target: str) -> EffectEntry | None:
        """The first exact entry matching ``target`` (literal or glob), in catalogue order."""
        if target not in self._exact_memo:
            first, last = target.split(".", 1)[0], target.rsplit(".", 1)[-1]
            globs = [
                glob
                for bucket in ((first, last), (first, None), (None, last), (None, None))
                for glob in self._globs.get(bucket, ())
            ]
            hits = [
                i
                for i, head, tail, rx in globs
                if target.startswith(head) and target.endswith(tail) and rx.match(target)
            ]
            if target in self._literal:
                hits.append(self._literal[target])
            self._exact_memo[target] = self._exact[min(hits)] if hits else None
        return self._exact_memo[target]

    @classmethod
    def load(cls, user: CatalogueSpec | None = None) -> Catalogue:
        shipped = load_shipped()
        return cls(merge(shipped, user) if user else shipped)

    @cached_property
    def _keywords(self) -> list[tuple[KeywordEntry, re.Pattern[str], re.Pattern[str]]]:
        return [(e, re.compile(e.name), re.compile(e.receiver)) for e in self.spec.keyword]

    def _keywords_named(self, name: str) -> list[tuple[KeywordEntry, re.Pattern[str]]]:
        """The keyword entries whose name pattern matches the method name ``name``, each
        with its receiver pattern: a method name recurs across thousands of calls."""
        found = self._keywords_memo.get(name)
        if found is None:
            found = [(e, rx) for e, name_rx, rx in self._keywords if name_rx.search(name)]
            self._keywords_memo[name] = found
        return found

    @cached_property
    def _keywords_memo(self) -> dict[str, list[tuple[KeywordEntry, re.Pattern[str]]]]:
        return {}

    @cached_property
    def _sql(self) -> list[tuple[re.Pattern[str], EffectKind]]:
        return [(re.compile(rule.matches), rule.effect) for rule in self.spec.sql]

    def names_exactly(self, names: Iterable[str]) -> frozenset[str]:
        """Those of ``names`` that an exact (non-suffix) entry matches."""
        return frozenset(name for name in names if self._exact_entry(name) is not None)

    def match_call(
        self, call: CallInfo, target: str, sql_hint: str | None = None
    ) -> CallMatch | None:
        """The effect of ``call`` (whose resolved dotted name is ``target``), if catalogued."""
        call = self._with_types(call)
        entry = self._exact_entry(target)
        if entry is not None:
            return _apply(entry, call, target, self, sql_hint, exact=True)
        for entry in self._by_method.get(target.rsplit(".", 1)[-1], ()):
            if _suffix_hit(entry, call, target):
                return _apply(entry, call, target, self, sql_hint, exact=False)
        return None

    def undecided(self, call: CallInfo, target: str) -> str | None:
        """Why an exact entry names this API yet says nothing about this call, else None.

        ``session.execute(stmt)`` with a ``stmt`` the scan could not type: the entry's
        conditions test the statement, none holds, and the entry has no effect of its own.
        The entry is still the API's boundary: what the call does rests on a value only
        known at run time, and the library's internals behind it (greenlet hand-offs,
        compilers, dialects) say nothing more about it. ``?.`` entries do not count: a
        receiver matched by its name alone may be a project object whose code can be read."""
        entry = self._exact_entry(target)
        if entry is None or (not entry.when and entry.sql_arg is None):
            return None
        call = self._with_types(call)
        if _apply(entry, call, target, self, None, exact=True) is not None:
            return None
        return _undecided_why(entry, call)

    def explains(self, call: CallInfo, target: str) -> bool:
        """An entry says what the call does (an effect, or nothing), or names the API whose
        effect an argument decides at run time: no need to read its source."""
        keyword = self.match_keyword(call, target)
        return (
            self.match_call(call, target) is not None
            or (keyword is not None and not keyword.follow)
            or self.is_pure(call, target, unknown_receiver=False)
            or self.undecided(call, target) is not None
        )

    def is_pure(self, call: CallInfo, target: str, *, unknown_receiver: bool) -> bool:
        """A ``[[pure]]`` entry explains the call: exact names for resolved targets, and
        ``?.`` method entries only when the receiver's type is unknown."""
        return self._pure.explains(call, target, unknown_receiver)

    def match_keyword(self, call: CallInfo, target: str) -> CallMatch | None:
        """Money words (``gateway.charge``) on receivers that look like payment APIs."""
        name = target.rsplit(".", 1)[-1]
        where = ""
        for entry, receiver_rx in self._keywords_named(name):
            where = where or f"{written(call)} {target.rsplit('.', 1)[0]}"
            if receiver_rx.search(where):
                api = api_name(call, target)
                return CallMatch(
                    entry.effect,
                    api,
                    entry.keyed_by,
                    exact=False,
                    detail=entry.why,
                    follow=entry.follow,
                )
        return None

    def match_augassign(self, attr: str) -> EffectKind | None:
        return next((a.effect for a in self.spec.augassign if re.search(a.attr, attr)), None)

    def classify_sql(self, text: str) -> EffectKind | None:
        body = _strip_literal(text)
        return next((kind for rx, kind in self._sql if rx.search(body)), None)


class _PureIndex:
    """``[[pure]]`` entries, indexed: asked once per unresolved call in the reachable code."""

    def __init__(self, entries: list[PureEntry]) -> None:
        exact = [e.call for e in entries if not e.is_suffix and not e.when]
        # Pure only when an argument says so (``open(p)``, ``open(p, "rb")``), per call.
        self._conditional = {e.call: e.when for e in entries if not e.is_suffix and e.when}
        self._literal = frozenset(c for c in exact if not _GLOB.search(c))
        globs = [glob_regex(c) for c in exact if _GLOB.search(c)]
        self._glob = re.compile("|".join(f"(?:{g})" for g in globs)) if globs else None
        self._methods: dict[str, list[PureEntry]] = {}
        for entry in entries:
            if entry.is_suffix:
                self._methods.setdefault(entry.call.rsplit(".", 1)[-1], []).append(entry)
        self._memo: dict[str, bool] = {}

    def explains(self, call: CallInfo, target: str, unknown_receiver: bool) -> bool:
        if unknown_receiver:
            return any(_pure_hit(e, call, target) for e in self._methods.get(_method(target), ()))
        conditions = self._conditional.get(target)
        if conditions is not None:
            return any(_holds(condition, call) for condition in conditions)
        found = self._memo.get(target)
        if found is None:
            found = target in self._literal or bool(self._glob and self._glob.match(target))
            self._memo[target] = found
        return found


def _method(target: str) -> str:
    return target.rsplit(".", 1)[-1]


def _pure_hit(entry: PureEntry, call: CallInfo, target: str) -> bool:
    suffix = entry.call[len(_SUFFIX) :]
    subject = f"{call.receiver_source}.{_method(target)}" if call.receiver_source else target
    if "." in suffix and not subject.endswith("." + suffix):
        return False
    return entry.receiver is None or re.search(entry.receiver, written(call)) is not None


def written(call: CallInfo) -> str:
    """The receiver as a reader sees it, on one line: what receiver hints are matched against.

    A receiver spread over lines (``Comment(\n    text=t,\n).save()``, as a formatter writes
    a long call) would otherwise fail every hint anchored with ``$``: ``.`` stops at a line
    break, and ``?.save``'s ``^(?!...image...).*$`` left such a save unexplained."""
    return " ".join(call.receiver_source.split())


def api_name(call: CallInfo, target: str) -> str:
    """How a reviewer recognises the call: ``Order.objects.create`` rather than ``?.create``."""
    if not target.startswith(_SUFFIX):
        return target
    method = target.rsplit(".", 1)[-1]
    return f"{call.receiver_source}.{method}" if call.receiver_source else method


def _suffix_hit(entry: EffectEntry, call: CallInfo, target: str) -> bool:
    suffix = entry.call[len(_SUFFIX) :]
    subject = api_name(call, target)
    if not (subject == suffix or subject.endswith("." + suffix)):
        return False
    if entry.receiver is None:
        return True
    return re.search(entry.receiver, _receiver_text(call, target)) is not None


def _receiver_text(call: CallInfo, target: str) -> str:
    """What a receiver hint is matched against: as written, plus its type when known.

    ``client = redis.Redis(); client.lpush(...)`` gives ``client redis.Redis``.
    """
    if target.startswith(_SUFFIX):
        return written(call)
    owner = target.rsplit(".", 1)[0]
    return f"{written(call)} {owner}".strip()


def _apply(
    entry: EffectEntry,
    call: CallInfo,
    target: str,
    cat: Catalogue,
    sql_hint: str | None,
    exact: bool,
) -> CallMatch | None:
    refined = next((r.effect for r in entry.when if _holds(r, call)), None)
    kind = refined or entry.effect
    unknown = None
    if entry.sql_arg is not None:
        sql = _sql_kind(entry.sql_arg, call, cat, sql_hint)
        unknown = None if sql or refined else _non_literal(call, entry.sql_arg)
        kind = sql or kind
    if kind is None:
        return None
    by_name = entry.is_suffix and entry.receiver is None and "." not in entry.call[len(_SUFFIX) :]
    return CallMatch(
        kind, api_name(call, target), entry.keyed_by, exact, entry.key_matches, unknown, by_name
    )


def _undecided_why(entry: EffectEntry, call: CallInfo) -> str:
    """``the statement `stmt` is only known at run time...``, naming the argument tested."""
    statement = entry.sql_arg is not None
    tested = entry.sql_arg if statement else next((w.arg for w in entry.when), None)
    keyword = None if statement else next((w.kwarg for w in entry.when if w.kwarg), None)
    source = ""
    if tested is not None and tested < len(call.arg_sources):
        source = call.arg_sources[tested]
    elif keyword is not None:
        source = call.kwarg_sources.get(keyword, "")
    what = "the statement" if statement else "the argument"
    named = f" `{_one_line(source)}`" if source else ""
    return f"{what}{named} is only known at run time: what this call does depends on it"


def _one_line(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _non_literal(call: CallInfo, index: int) -> str | None:
    """The source of argument ``index`` when it is an expression, not a literal."""
    if index >= len(call.args) or call.args[index] != _EXPR or index >= len(call.arg_sources):
        return None
    return call.arg_sources[index]


def _sql_kind(
    index: int, call: CallInfo, cat: Catalogue, sql_hint: str | None
) -> EffectKind | None:
    value = _arg_texts(call, index, None)
    found = next((k for k in (cat.classify_sql(v) for v in value) if k), None)
    return found or (cat.classify_sql(sql_hint) if sql_hint else None)


def _holds(rule: Condition, call: CallInfo) -> bool:
    if rule.type_matches is not None:
        types = call.arg_types
        known = types[rule.arg] if rule.arg is not None and rule.arg < len(types) else ""
        return bool(known) and re.search(rule.type_matches, known) is not None
    texts = _arg_texts(call, rule.arg, rule.kwarg)
    if rule.present is not None:
        return bool(texts) == rule.present
    if "equals" in rule.model_fields_set:
        return any(v == rule.equals for v in _arg_literals(call, rule.arg, rule.kwarg))
    return rule.matches is not None and any(re.search(rule.matches, t) for t in texts)


def _arg_literals(call: CallInfo, arg: int | None, kwarg: str | None) -> list[_Literal]:
    values: list[_Literal] = []
    if arg is not None and arg < len(call.args):
        values.append(call.args[arg])
    if kwarg == _ANY_ARG:
        values += [*call.args, *call.kwargs.values()]
    elif kwarg is not None and kwarg in call.kwargs:
        values.append(call.kwargs[kwarg])
    return [v for v in values if v != _EXPR]


def _arg_texts(call: CallInfo, arg: int | None, kwarg: str | None) -> list[str]:
    """Literal values as text, falling back to the source of non-literal arguments."""
    texts = [str(v) for v in _arg_literals(call, arg, kwarg)]
    if arg is not None and arg < len(call.arg_sources):
        texts.append(call.arg_sources[arg])
    if kwarg == _ANY_ARG:
        texts += [*call.arg_sources, *call.kwarg_sources.values()]
    elif kwarg is not None and kwarg in call.kwarg_sources:
        texts.append(call.kwarg_sources[kwarg])
    return texts


_LITERAL_PREFIX = re.compile(r"""^\s*(?:[\w.]+\(\s*)?[rRbBfFuU]*(?:\"\"\"|'''|"|')""")


def _strip_literal(text: str) -> str:
    """``text("INSERT ...")`` / ``'''UPDATE ...'''`` -> the SQL itself."""
    return _LITERAL_PREFIX.sub("", text, count=1)

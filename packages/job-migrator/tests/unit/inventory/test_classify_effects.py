"""The interprocedural fixpoint: complete, terminating, and every chain a real call path."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from inventory._catalogue import Catalogue, CatalogueSpec, EffectEntry
from inventory._classify._effects import EffectAnalysis
from inventory._classify._graph import CallGraph
from inventory._classify._index import SymbolIndex
from inventory._classify._local import LocalEffects
from inventory.models import EffectKind, Idempotency
from inventory.summary import Fact, FactKind, FileSummary, Span
from tests.unit.inventory.classify_builders import (
    CATALOGUE,
    call,
    fn,
    job_of,
    module,
    run,
    thread_site,
)

# A call graph on n functions: edges[i] are the callees of f{i}; effectful[i] sends an email.
graphs = st.integers(min_value=1, max_value=9).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.sets(st.integers(0, n - 1), max_size=4), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
    )
)


def build(n: int, edges: list[set[int]], effectful: list[bool]) -> FileSummary:
    functions = []
    for i in range(n):
        calls = [call(f"m.f{j}", line=100 * i + j) for j in sorted(edges[i])]
        if effectful[i]:
            calls.append(call(f"ext.api{i}", line=100 * i + 99))
        functions.append(fn(f"m.f{i}", *calls, line=100 * i))
    return module("m", *functions)


# One API per function, so that effects reached through callees stay distinguishable.
PER_FUNCTION = Catalogue.load(
    CatalogueSpec(effect=[EffectEntry(call="ext.api*", effect=EffectKind.EMAIL_SEND)])
)


def analyse(summary: FileSummary, catalogue: Catalogue = CATALOGUE) -> EffectAnalysis:
    graph = CallGraph(SymbolIndex([summary]))
    analysis = EffectAnalysis(graph, LocalEffects(graph, catalogue, {}))
    analysis.analyse([f.qualname for f in summary.functions])
    return analysis


def distances(start: int, edges: list[set[int]]) -> dict[int, int]:
    """Breadth-first call distance from ``start`` to every reachable function."""
    seen, todo = {start: 0}, [start]
    for current in todo:
        for j in sorted(edges[current]):
            if j not in seen:
                seen[j] = seen[current] + 1
                todo.append(j)
    return seen


@settings(max_examples=200, deadline=None)
@given(graphs)
def test_fixpoint_is_complete_and_chains_are_simple_call_paths(
    case: tuple[int, list[set[int]], list[bool]],
) -> None:
    n, edges, effectful = case
    analysis = analyse(build(n, edges, effectful), PER_FUNCTION)
    for i in range(n):
        traces = analysis.traces(f"m.f{i}")
        reach = distances(i, edges)
        found = {int(t.effect.chain[-1][3:]) for t in traces}
        assert found == {j for j in reach if effectful[j]}
        for trace in traces:
            chain = [int(q[3:]) for q in trace.effect.chain]
            assert chain[0] == i and len(chain) == reach[chain[-1]] + 1  # shortest, hence simple
            assert all(b in edges[a] for a, b in itertools.pairwise(chain))
            assert trace.effect.location.line == 100 * chain[-1] + 99


def test_effects_two_calls_deep_carry_the_chain_and_location() -> None:
    summary = module(
        "shop.jobs",
        fn("shop.jobs.job", call("shop.jobs.middle", line=2)),
        fn("shop.jobs.middle", call("shop.jobs.leaf", line=5), line=4),
        fn("shop.jobs.leaf", call("requests.post", line=8), line=7),
    )
    effect = analyse(summary).traces("shop.jobs.job")[0].effect
    assert effect.kind == EffectKind.HTTP_POST
    assert effect.chain == ["shop.jobs.job", "shop.jobs.middle", "shop.jobs.leaf"]
    assert (effect.location.path, effect.location.line) == ("shop/jobs.py", 8)


def test_mutual_recursion_terminates_with_both_effects() -> None:
    summary = module(
        "r",
        fn("r.ping", call("r.pong"), call("requests.post", line=2)),
        fn("r.pong", call("r.ping"), call("r.pong"), call("smtplib.SMTP.sendmail", line=9)),
    )
    kinds = {t.effect.kind for t in analyse(summary).traces("r.ping")}
    assert kinds == {EffectKind.HTTP_POST, EffectKind.EMAIL_SEND}


def test_only_functions_reachable_from_sites_and_handlers_are_analysed() -> None:
    summary = module("big", *(fn(f"big.f{i}", call("requests.post")) for i in range(50)))
    graph = CallGraph(SymbolIndex([summary]))
    analysis = EffectAnalysis(graph, LocalEffects(graph, CATALOGUE, {}))
    analysis.analyse(["big.f3"])
    assert analysis.traces("big.f3") and not analysis.traces("big.f4")


def test_augassign_then_save_is_an_increment_and_money_words_are_account_state() -> None:
    bump = Fact(
        kind=FactKind.AUGASSIGN_ATTR,
        span=Span(line=2),
        text="order.views += 1",
        target="order.views",
    )
    debit = Fact(
        kind=FactKind.AUGASSIGN_ATTR,
        span=Span(line=3),
        text="wallet.balance -= amount",
        target="wallet.balance",
    )
    save = call("?.save", line=4, receiver_source="order")
    summary = module("w", fn("w.job", save, facts=[bump, debit], params=["amount"]))
    kinds = {t.effect.kind for t in analyse(summary).traces("w.job")}
    assert kinds == {EffectKind.DB_INCREMENT, EffectKind.ACCOUNT_STATE}


def test_thread_started_inside_a_job_is_part_of_its_effects() -> None:
    summary = module(
        "t",
        fn("t.job", line=1),
        fn("t.worker", call("smtplib.SMTP.sendmail", line=9), line=8),
        fn("t.view", line=20),
        sites=[thread_site("t.worker", "t.job", line=2), thread_site("t.job", "t.view", line=21)],
    )
    _, jobs = run(summary)
    email = job_of(jobs, "t.job").effects[0]
    assert email.kind == EffectKind.EMAIL_SEND and email.chain == ["t.job", "t.worker"]


def test_a_call_through_a_literal_table_of_functions_follows_each_of_them() -> None:
    # dispatch_dict_literal.py (django-cms cms/utils/conf.py COMPLEX[name]()): the extractor
    # writes the table's values into the DYNAMIC_DISPATCH fact as "table NAME: a b".
    table = Fact(
        kind=FactKind.DYNAMIC_DISPATCH,
        span=Span(line=3),
        text="COMPLEX[name]()",
        target="table COMPLEX: app.get_media_root app.get_languages",
    )
    body = [
        fn("app.job", call("app.get_setting", line=2)),
        fn("app.get_setting", facts=[table], params=["name"]),
        fn("app.get_media_root"),
        fn("app.get_languages", call("?.create", receiver_source="Lang.objects", line=9)),
    ]
    sites = [thread_site("app.job", "app.view", line=99)]
    _, jobs = run(module("app", *body, sites=sites))
    job = job_of(jobs, "app.job")
    assert job.idempotency == Idempotency.NON_IDEMPOTENT
    assert [e.chain for e in job.effects] == [["app.job", "app.get_setting", "app.get_languages"]]


def test_a_table_with_a_value_outside_the_project_stays_dynamic() -> None:
    table = Fact(
        kind=FactKind.DYNAMIC_DISPATCH,
        span=Span(line=3),
        text="COMPLEX[name]()",
        target="table COMPLEX: app.get_media_root os.system",
    )
    body = [fn("app.job", facts=[table]), fn("app.get_media_root")]
    _, jobs = run(module("app", *body, sites=[thread_site("app.job", "app.view", line=99)]))
    assert job_of(jobs, "app.job").idempotency == Idempotency.UNKNOWN

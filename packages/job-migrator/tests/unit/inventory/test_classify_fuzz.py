"""Arbitrary (even contradictory) summaries never crash the classifier, and order never matters."""

from __future__ import annotations

from random import Random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.models import Pattern
from inventory.summary import ClassInfo, FileSummary, RawSite, Span, TargetKind
from tests.unit.inventory.classify_builders import call, fn, run

MODULES = ["a", "a.b", "c"]
LOCAL = ["f", "g", "C", "C.run", "C.__init__", "x", "open", ""]
names = st.builds(
    lambda m, n: f"{m}.{n}" if n else m, st.sampled_from(MODULES), st.sampled_from(LOCAL)
)
targets = st.one_of(
    names,
    st.sampled_from(["requests.post", "?.save", "?.create", "stripe.Refund.create", "?.", ""]),
)


@st.composite
def summaries(draw: st.DrawFn) -> list[FileSummary]:
    out = []
    for module in MODULES:
        functions = [
            fn(
                f"{module}.{name}",
                *(call(t, line=i) for i, t in enumerate(draw(st.lists(targets, max_size=4)))),
            )
            for name in draw(st.sets(st.sampled_from(["f", "g", "C.run", "C.__init__"])))
        ]
        bases = draw(st.lists(st.one_of(names, st.just("threading.Thread")), max_size=2))
        classes = [ClassInfo(qualname=f"{module}.C", name="C", span=Span(line=1), bases=bases)]
        sites = [
            RawSite(
                pattern=Pattern.THREAD,
                span=Span(line=50 + i),
                target=t,
                target_kind=k,
                enclosing_function=f"{module}.f",
            )
            for i, (t, k) in enumerate(
                draw(
                    st.lists(
                        st.tuples(st.one_of(st.none(), names), st.sampled_from(TargetKind)),
                        max_size=3,
                    )
                )
            )
        ]
        aliases = st.dictionaries(st.sampled_from(LOCAL[:6]), names, max_size=3)
        out.append(
            FileSummary(
                path=module.replace(".", "/") + ".py",
                module=module,
                functions=functions,
                classes=classes,
                sites=sites,
                imports=draw(aliases),
                assignments=draw(aliases),
                star_imports=draw(st.lists(st.sampled_from(MODULES), max_size=2)),
            )
        )
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(summaries(), st.randoms(use_true_random=False))
def test_classify_never_raises_and_ignores_input_order(
    found: list[FileSummary], rnd: Random
) -> None:
    first = run(*found)
    shuffled = list(found)
    rnd.shuffle(shuffled)
    assert run(*shuffled) == first
    sites, jobs = first
    assert {s.job for s in sites} - {"unknown"} == {j.qualname for j in jobs}

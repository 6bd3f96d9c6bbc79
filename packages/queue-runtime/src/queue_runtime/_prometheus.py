"""prometheus_client when installed (the ``queue-runtime[prometheus]`` extra), else a tiny stand-in.

Without it the counters still count in-process (``WorkerMetrics.value`` and
``gate_inline_counts`` keep working); only exporting them over HTTP needs
the real library, and says so in one line.

:class:`BatchHistogram` is a histogram fed a whole batch of observations under
one lock (prometheus_client's ``observe`` takes locks per call, which a worker
settling thousands of jobs a second would pay per job). It is a custom
collector, so it serves from either registry.
"""

from __future__ import annotations

import bisect
import collections
import functools
import math
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from queue_runtime.errors import ConfigError

try:
    from prometheus_client.core import HistogramMetricFamily
except ImportError:  # only prometheus_client's registry calls collect(), so it is never needed
    HistogramMetricFamily = None  # type: ignore[assignment,misc]

INSTALL_HINT = "Prometheus export needs prometheus_client: pip install 'queue-runtime[prometheus]'"

Labels = tuple[tuple[str, str], ...]  # sorted (name, value) pairs: one series


class MetricsUnavailable(ConfigError):
    """Prometheus metrics cannot be served."""


class _Child:
    """One series of a fallback metric; the same object for every ``labels()`` call."""

    def __init__(self, registry: FallbackRegistry, labels: Labels, name: str, suffix: str) -> None:
        self._samples = registry.samples.setdefault(labels, {})
        self._registry, self._labels = registry, labels
        self._prefix, self._suffix = name, suffix
        self._lock = threading.Lock()

    def _add(self, name: str, amount: float) -> None:
        with self._lock:
            self._samples[name] = self._samples.get(name, 0.0) + amount

    def inc(self, amount: float = 1.0) -> None:
        self._add(self._prefix + self._suffix, amount)

    def set(self, value: float) -> None:
        with self._lock:
            self._samples[self._prefix] = float(value)

    def observe(self, value: float) -> None:
        self._add(self._prefix + "_count", 1.0)
        self._add(self._prefix + "_sum", value)


class FallbackRegistry:
    """Samples by (label pairs, sample name): what ``get_sample_value`` reads."""

    def __init__(self) -> None:
        self.samples: dict[Labels, dict[str, float]] = {}
        self._collectors: list[_Samples] = []

    def register(self, collector: _Samples) -> None:
        self._collectors.append(collector)

    def get_sample_value(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        key = tuple(sorted((labels or {}).items()))
        found = self.samples.get(key, {}).get(name)
        if found is not None:
            return found
        for collector in self._collectors:
            for sample, pairs, value in collector.samples():
                if sample == name and pairs == key:
                    return value
        return None


class _Samples(Protocol):
    def samples(self) -> Iterator[tuple[str, Labels, float]]: ...


_DEFAULT = FallbackRegistry()


class _Metric:
    suffix = ""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str] = (),
        registry: FallbackRegistry | None = None,
        **_: Any,
    ) -> None:
        self._name, self._labels = name, list(labelnames)
        self._registry = registry or _DEFAULT
        self._children: dict[Labels, _Child] = {}
        self._lock = threading.Lock()

    def labels(self, *values: str, **named: str) -> _Child:
        pairs = dict(zip(self._labels, values, strict=False)) | named
        if set(pairs) != set(self._labels):
            raise ValueError(f"{self._name} takes labels {self._labels}, got {sorted(pairs)}")
        key = tuple(sorted(pairs.items()))
        with self._lock:
            child = self._children.get(key)
            if child is None:
                child = self._children[key] = _Child(self._registry, key, self._name, self.suffix)
            return child


class FallbackCounter(_Metric):
    suffix = "_total"


class FallbackGauge(_Metric):
    pass


class FallbackHistogram(_Metric):
    pass


def fallback_serve(port: int, addr: str = "0.0.0.0", registry: object = None) -> None:
    raise MetricsUnavailable(INSTALL_HINT)


@dataclass
class _Series:
    counts: list[int]  # per bucket, not cumulative; the last one is +Inf
    total: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


class BatchHistogram:
    """A labelled histogram fed batches: ``observe_many(labels, values)`` locks once.

    Register it on a prometheus_client ``CollectorRegistry`` or a
    :class:`FallbackRegistry`; both read it through :meth:`samples`.
    """

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str],
        buckets: Sequence[float],
        registry: Any,
    ) -> None:
        self.name, self._doc, self._labelnames = name, documentation, tuple(labelnames)
        self._bounds = tuple(sorted(float(b) for b in buckets if not math.isinf(b)))
        self._series: dict[tuple[str, ...], _Series] = {}
        self._lock = threading.Lock()
        registry.register(self)

    def observe_many(self, values: tuple[str, ...], observed: Sequence[float]) -> None:
        """Add observations to the series of ``values`` (label values, in labelnames order)."""
        if not observed:
            return
        # v <= bound: its bucket; counted per bucket first (one add per bucket under the lock)
        found = collections.Counter(
            map(functools.partial(bisect.bisect_left, self._bounds), observed)
        )
        series = self._series.get(values) or self._new_series(values)
        total = sum(observed)
        with series.lock:
            for index, count in found.items():
                series.counts[index] += count
            series.total += total

    def _new_series(self, values: tuple[str, ...]) -> _Series:
        if len(values) != len(self._labelnames):
            raise ValueError(f"{self.name} takes labels {list(self._labelnames)}, got {values}")
        with self._lock:
            return self._series.setdefault(values, _Series([0] * (len(self._bounds) + 1)))

    def series(self) -> Iterator[tuple[tuple[str, ...], list[tuple[str, float]], float]]:
        """Each series: label values, cumulative (le, count) buckets ending at +Inf, sum."""
        with self._lock:
            items = list(self._series.items())
        for values, s in items:
            with s.lock:
                counts, total = list(s.counts), s.total
            running, buckets = 0, []
            for bound, count in zip([*self._bounds, math.inf], counts, strict=True):
                running += count
                buckets.append((_le(bound), float(running)))
            yield values, buckets, total

    def samples(self) -> Iterator[tuple[str, Labels, float]]:
        for values, buckets, total in self.series():
            pairs = list(zip(self._labelnames, values, strict=True))
            for le, count in buckets:
                yield self.name + "_bucket", tuple(sorted([*pairs, ("le", le)])), count
            key = tuple(sorted(pairs))
            yield self.name + "_count", key, buckets[-1][1]
            yield self.name + "_sum", key, total

    def describe(self) -> list[Any]:
        return [HistogramMetricFamily(self.name, self._doc, labels=self._labelnames)]

    def collect(self) -> list[Any]:
        family = HistogramMetricFamily(self.name, self._doc, labels=self._labelnames)
        for values, buckets, total in self.series():
            family.add_metric(list(values), buckets, total)
        return [family]


def _le(bound: float) -> str:
    return "+Inf" if math.isinf(bound) else repr(bound)

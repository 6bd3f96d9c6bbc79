"""prometheus_client when installed (the ``queue-runtime[prometheus]`` extra), else a tiny stand-in.

Without it the counters still count in-process (``WorkerMetrics.value`` and
``gate_inline_counts`` keep working); only exporting them over HTTP needs
the real library, and says so in one line.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from queue_runtime.errors import ConfigError

INSTALL_HINT = "Prometheus export needs prometheus_client: pip install 'queue-runtime[prometheus]'"


class MetricsUnavailable(ConfigError):
    """Prometheus metrics cannot be served."""


class _Child:
    def __init__(self, samples: dict[str, float], prefix: str, suffix: str) -> None:
        self._samples, self._prefix, self._suffix = samples, prefix, suffix
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
    """Samples by (sample name, label values): what ``get_sample_value`` reads."""

    def __init__(self) -> None:
        self.samples: dict[tuple[tuple[str, str], ...], dict[str, float]] = {}

    def get_sample_value(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        return self.samples.get(tuple(sorted((labels or {}).items())), {}).get(name)


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

    def labels(self, *values: str, **named: str) -> _Child:
        pairs = dict(zip(self._labels, values, strict=False)) | named
        samples = self._registry.samples.setdefault(tuple(sorted(pairs.items())), {})
        return _Child(samples, self._name, self.suffix)


class FallbackCounter(_Metric):
    suffix = "_total"


class FallbackGauge(_Metric):
    pass


class FallbackHistogram(_Metric):
    pass


def fallback_serve(port: int, addr: str = "0.0.0.0", registry: object = None) -> None:
    raise MetricsUnavailable(INSTALL_HINT)

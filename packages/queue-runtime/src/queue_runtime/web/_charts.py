"""Inline SVG charts, drawn on the server: no JavaScript library, no build step.

- :func:`bar_chart`: one bar per minute of the last hour, oldest on the left,
  each with a tooltip; a y axis with round ticks in the series' unit and an x
  axis every 15 minutes. A capped minute (more jobs than were read) says "at least".
- :func:`hbar_chart`: one horizontal bar per label (a job name), with an x
  axis of round ticks in the unit.

Every number is formatted here and every text escaped, so the markup is safe
to embed as is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from markupsafe import Markup, escape

WIDTH, HEIGHT, PAD = 600, 160, 24
LEFT = 64  # room for the y axis' labels
BOTTOM = 22  # room for the x axis' labels
Unit = Callable[[float], str]


def nice_ticks(peak: float, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least ``peak`` (1, 2, 2.5 or 5 times a power of ten)."""
    if peak <= 0:
        return [0.0, 1.0]
    raw = peak / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [i * step for i in range(math.ceil(peak / step - 1e-9) + 1)]


def bar_chart(
    element_id: str, title: str, values: Sequence[float], unit: Unit, capped: Sequence[bool] = ()
) -> Markup:
    """An SVG bar chart of ``values`` (one a minute) with its title and both axes."""
    ticks = nice_ticks(max(values, default=0))
    top = ticks[-1]
    inner_w, inner_h = WIDTH - LEFT - PAD, HEIGHT - PAD - BOTTOM
    base = PAD + inner_h
    step = inner_w / max(len(values), 1)
    parts = [_y_axis(ticks, unit, base, inner_h)]
    for i, value in enumerate(values):
        h = inner_h * value / top
        at_least = "at least " if i < len(capped) and capped[i] else ""
        parts.append(
            f'<rect x="{LEFT + i * step:.1f}" y="{base - h:.1f}" width="{max(step - 1, 1):.1f}"'
            f' height="{h:.1f}"><title>{_minute_label(len(values) - 1 - i)}: {at_least}'
            f"{escape(unit(value))}</title></rect>"
        )
    parts.append(f'<line x1="{LEFT}" y1="{base}" x2="{WIDTH - PAD}" y2="{base}" class="axis"/>')
    for ago in (60, 45, 30, 15, 0):
        x = LEFT + inner_w * (60 - ago) / 60
        label = "now" if ago == 0 else f"-{ago} min"
        anchor = "end" if ago == 0 else "start" if ago == 60 else "middle"
        parts.append(
            f'<text x="{x:.1f}" y="{HEIGHT - 6}" text-anchor="{anchor}" class="tick">{label}</text>'
        )
    return _svg(element_id, title, HEIGHT, "".join(parts))


def hbar_chart(
    element_id: str, title: str, rows: Sequence[tuple[str, float]], unit: Unit
) -> Markup:
    """One horizontal bar per ``(label, value)``, labels on the left, an x axis below."""
    label_w, row_h = 230, 18
    height = PAD + row_h * max(len(rows), 1) + BOTTOM + 4
    ticks = nice_ticks(max((v for _, v in rows), default=0))
    top = ticks[-1]
    inner_w = WIDTH - label_w - PAD
    base = height - BOTTOM
    parts = []
    for tick in ticks:
        x = label_w + inner_w * tick / top
        parts.append(
            f'<line x1="{x:.1f}" y1="{PAD}" x2="{x:.1f}" y2="{base}" class="grid"/>'
            f'<text x="{x:.1f}" y="{height - 6}" text-anchor="middle" class="tick">'
            f"{escape(unit(tick))}</text>"
        )
    for i, (label, value) in enumerate(rows):
        y = PAD + i * row_h
        w = inner_w * value / top
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end" class="label">'
            f"{escape(_tail(label))}</text>"
            f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}">'
            f"<title>{escape(label)}: {escape(unit(value))}</title></rect>"
        )
    parts.append(f'<line x1="{label_w}" y1="{base}" x2="{WIDTH - PAD}" y2="{base}" class="axis"/>')
    return _svg(element_id, title, height, "".join(parts))


def _y_axis(ticks: list[float], unit: Unit, base: float, inner_h: float) -> str:
    top = ticks[-1]
    lines = []
    for tick in ticks:
        y = base - inner_h * tick / top
        lines.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - PAD}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 4}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
            f"{escape(unit(tick))}</text>"
        )
    return "".join(lines)


def _svg(element_id: str, title: str, height: int, body: str) -> Markup:
    return Markup(
        f'<svg id="{escape(element_id)}" class="chart" viewBox="0 0 {WIDTH} {height}"'
        f' width="{WIDTH}" height="{height}" role="img" aria-label="{escape(title)}">'
        f'<text x="{PAD}" y="14" class="title">{escape(title)}</text>{body}</svg>'
    )


def _tail(label: str, width: int = 34) -> str:
    """A job name's end (its module path's start is what names share)."""
    return label if len(label) <= width else "…" + label[-(width - 1) :]


def _minute_label(ago: int) -> str:
    return "this minute" if ago == 0 else f"{ago} min ago"


def jobs_per_minute(value: float) -> str:
    return f"{value:.0f}/min" if value >= 10 or value == int(value) else f"{value:.1f}/min"


def seconds(value: float) -> str:
    if value < 1 and value != 0:
        return f"{value * 1000:.0f} ms"
    return f"{value:.1f}s" if value < 120 else f"{value / 60:.1f} min"


def percent(value: float) -> str:
    return f"{value * 100:.0f}%" if value >= 0.1 or value == 0 else f"{value * 100:.1f}%"

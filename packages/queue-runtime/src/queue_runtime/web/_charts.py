"""Inline SVG charts, drawn on the server: no JavaScript library, no build step.

One bar per minute of the last hour, oldest on the left, each with a tooltip;
a capped minute (more jobs than were read) says "at least". Every number is
formatted here and every text escaped, so the markup is safe to embed as is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from markupsafe import Markup, escape

WIDTH, HEIGHT, PAD = 600, 140, 24


def bar_chart(
    element_id: str,
    title: str,
    values: Sequence[float],
    unit: Callable[[float], str],
    capped: Sequence[bool] = (),
) -> Markup:
    """An SVG bar chart of ``values`` with its title, the peak and the time axis."""
    peak = max(values, default=0) or 1
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    step = inner_w / max(len(values), 1)
    bars = []
    for i, value in enumerate(values):
        h = inner_h * value / peak
        x, y = PAD + i * step, PAD + inner_h - h
        at_least = "at least " if i < len(capped) and capped[i] else ""
        bars.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(step - 1, 1):.1f}" height="{h:.1f}">'
            f"<title>{_minute_label(len(values) - 1 - i)}: {at_least}{escape(unit(value))}"
            "</title></rect>"
        )
    base = PAD + inner_h
    return Markup(
        f'<svg id="{escape(element_id)}" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}"'
        f' width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(title)}">'
        f'<text x="{PAD}" y="14" class="title">{escape(title)}</text>'
        f'<text x="{WIDTH - PAD}" y="14" text-anchor="end" class="peak">'
        f"peak {escape(unit(max(values, default=0)))}</text>"
        f'<line x1="{PAD}" y1="{base}" x2="{WIDTH - PAD}" y2="{base}" class="axis"/>'
        f"{''.join(bars)}"
        f'<text x="{PAD}" y="{HEIGHT - 6}" class="tick">-60 min</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - 6}" text-anchor="end" class="tick">now</text>'
        "</svg>"
    )


def _minute_label(ago: int) -> str:
    return "this minute" if ago == 0 else f"{ago} min ago"


def jobs_per_minute(value: float) -> str:
    return f"{value:.0f}/min"


def seconds(value: float) -> str:
    return f"{value:.1f}s" if value < 120 else f"{value / 60:.1f} min"

"""Order pricing with volume discounts.

NOT a job: the thread pool below fans CPU work out and joins it inside the
request (``with`` block, results consumed at once). There is nothing to
move onto a queue, and the scanner must not report it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

DISCOUNTS = ((100, 15), (10, 5))  # (minimum quantity, percent off), best first


def unit_price(price_cents: int, qty: int) -> int:
    percent = next((off for minimum, off in DISCOUNTS if qty >= minimum), 0)
    return price_cents * (100 - percent) // 100


def quote(price_cents: int, quantities: list[int]) -> list[int]:
    """The total of each quantity, computed in parallel."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        units = list(pool.map(unit_price, [price_cents] * len(quantities), quantities))
    return [unit * qty for unit, qty in zip(units, quantities, strict=True)]

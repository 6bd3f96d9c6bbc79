"""Pricing is plain computation (its thread pool is joined inside the call)."""

from __future__ import annotations

from shop.pricing import quote, unit_price


def test_volume_discounts():
    assert [unit_price(1000, q) for q in (1, 9, 10, 99, 100)] == [1000, 1000, 950, 950, 850]


def test_quote_returns_the_total_of_each_quantity_in_order():
    assert quote(1000, [1, 10, 100]) == [1000, 9500, 85000]

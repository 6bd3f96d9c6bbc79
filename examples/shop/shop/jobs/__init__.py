"""The shop's background jobs, re-exported from where they are defined."""

from ..images import make_thumbnail
from ..reports import export_daily_report, rebuild_reports
from .audit import write_audit
from .cache import CacheWarmer, cached_product, warm_all_product_caches, warm_product_cache
from .stock import decrement_stock

__all__ = [
    "CacheWarmer",
    "cached_product",
    "decrement_stock",
    "export_daily_report",
    "make_thumbnail",
    "rebuild_reports",
    "warm_all_product_caches",
    "warm_product_cache",
    "write_audit",
]

"""The shop's HTTP API, one router per resource."""

from .admin import router as admin
from .orders import router as orders
from .products import router as products
from .reports import router as reports
from .users import router as users

ROUTERS = (admin, orders, products, reports, users)

__all__ = ["ROUTERS"]

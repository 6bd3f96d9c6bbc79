"""A catalogue entry names a library's public API; the scan may resolve a call further.

``[[pure]] call = "loguru.logger.*"``: loguru's ``logger`` is an instance of
``loguru._logger.Logger`` assigned in ``loguru/__init__.py``. With the environment installed,
``logger.warning(...)`` (imported from the project's own logging module, or from a library
that re-exports it) resolves to ``loguru._logger.Logger.warning``, whose source writes to
handlers: on the census (opal-server, installed) every log line of a handler became a site
of its own, of unknown verdict. The entry speaks for every name the call was resolved
through, the public one included. A call the catalogue does not name is still read.
"""

from __future__ import annotations

from pathlib import Path

from inventory import Idempotency, Inventory, scan
from tests.unit.inventory.fake_venv import fake_venv, write_tree

LIBRARY = {
    "loguru/__init__.py": ("from loguru._logger import Logger as _Logger\n\nlogger = _Logger()\n"),
    # A sink that posts each line (loguru takes any callable as a sink): read from the
    # source, a log line is an HTTP call.
    "loguru/_logger.py": (
        "import urllib.request\n\n\n"
        "class Logger:\n"
        "    def warning(self, message):\n"
        "        self._log(message)\n\n"
        "    def _log(self, message):\n"
        "        urllib.request.urlopen('http://collector/', data=message.encode())\n"
    ),
    "loguru-0.7.dist-info/top_level.txt": "loguru\n",
    "loguru-0.7.dist-info/METADATA": "Name: loguru\nVersion: 0.7\n",
    # A library of the app's own organisation re-exporting the logger (opal_common.logger).
    "commonlib/__init__.py": "",
    "commonlib/logger.py": "from loguru import logger\n",
    "commonlib/shipping.py": (
        "import urllib.request\n\n\n"
        "class Shipper:\n"
        "    def ship(self, order):\n"
        "        urllib.request.urlopen('http://carrier/', data=order.encode())\n\n\n"
        "shipper = Shipper()\n"
    ),
    "commonlib-1.0.dist-info/top_level.txt": "commonlib\n",
    "commonlib-1.0.dist-info/METADATA": "Name: commonlib\nVersion: 1.0\n",
}
VIEWS = (
    "import smtplib\n\n"
    "from fastapi import FastAPI\n\n"
    "from commonlib.logger import logger\n"
    "from commonlib.shipping import shipper\n"
    "from shop.log import logger as own_logger\n\n"
    "app = FastAPI()\n\n\n"
    "@app.post('/orders')\n"
    "def create_order():\n"
    "    logger.warning('creating')\n"
    "    own_logger.warning('created')\n"
    "    smtplib.SMTP('localhost').sendmail('a@example.com', ['b@example.com'], 'x')\n\n\n"
    "@app.post('/ship')\n"
    "def ship(order: str):\n"
    "    own_logger.warning('shipping')\n"
    "    shipper.ship(order)\n"
)


def _scan(tmp_path: Path) -> Inventory:
    python = fake_venv(tmp_path / "env", LIBRARY)
    write_tree(
        tmp_path / "project",
        {
            "shop/__init__.py": "",
            "shop/log.py": "from loguru import logger\n",
            "shop/api.py": VIEWS,
        },
    )
    return scan(tmp_path / "project", use_cache=False, jobs=1, python=str(python))


def test_a_log_line_through_a_re_export_is_no_site(tmp_path: Path) -> None:
    inventory = _scan(tmp_path)
    order = [s for s in inventory.sites if s.enclosing_function == "shop.api.create_order"]
    assert [s.target_source for s in order] == ["smtplib.SMTP.sendmail"]
    assert not [s for s in inventory.sites if "Logger" in s.job]


def test_a_library_object_the_catalogue_does_not_name_is_still_read(tmp_path: Path) -> None:
    inventory = _scan(tmp_path)
    ship = [s for s in inventory.sites if s.enclosing_function == "shop.api.ship"]
    assert [s.job for s in ship] == ["commonlib.shipping.Shipper.ship"]
    verdicts = {j.qualname: j.idempotency for j in inventory.jobs}
    assert verdicts["commonlib.shipping.Shipper.ship"] == Idempotency.NON_IDEMPOTENT

"""Periodic work: ``python -m shop.cron`` runs next to the web app, like a crontab.

The jobs are registered with the ``schedule`` library's in-process scheduler,
which the scanner reports as ``scheduler`` sites. ``main`` itself loops
forever in the main thread: it is the scheduler's runner, not a job.
"""

from __future__ import annotations

import os
import time

import schedule

from shop.db import init_db
from shop.jobs import warm_all_product_caches
from shop.services import Services, install
from shop.settings import Settings


def install_schedules() -> None:
    # Site: an in-process scheduler.
    schedule.every(15).minutes.do(warm_all_product_caches)


def main() -> None:
    settings = Settings.from_env(os.environ)
    init_db(settings.database)
    install(Services(settings))
    install_schedules()
    while True:
        schedule.run_pending()
        time.sleep(max(1.0, schedule.idle_seconds() or 60.0))


if __name__ == "__main__":
    main()

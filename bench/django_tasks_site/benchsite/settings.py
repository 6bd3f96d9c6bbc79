"""Both backends' settings: BENCH_BACKEND picks ``ours`` (queue_runtime) or ``db`` (django-tasks-db).

django-tasks-db keeps its tasks in Django's database: BENCH_DB_NAME, a PostgreSQL database
the bench created. queue_runtime reads its own settings from the environment.
"""

import os

SECRET_KEY = "bench-only"
DEBUG = False
USE_TZ = True
_BACKEND = os.environ.get("BENCH_BACKEND", "ours")
INSTALLED_APPS = ["django.contrib.contenttypes", "benchsite"]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("BENCH_DB_NAME", "postgres"),
        "USER": "postgres",
        "HOST": "127.0.0.1",
        "PORT": "5432",
    }
}
if _BACKEND == "db":
    INSTALLED_APPS.append("django_tasks_db")
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
else:
    TASKS = {"default": {"BACKEND": "queue_runtime.django.TaskBackend"}}
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}

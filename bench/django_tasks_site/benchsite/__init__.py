"""The Django project of bench/django_tasks_bench.py: one no-op task, two TASKS backends."""

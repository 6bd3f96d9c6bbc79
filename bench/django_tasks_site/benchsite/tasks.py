"""The benchmark's task: does nothing (both backends run this same function)."""

from django.tasks import task


@task
def noop(i: int) -> None:
    return None

"""Site details beyond the detector examples: waiting, result use, binding through names."""

from __future__ import annotations

import textwrap

from inventory._extract import extract_source
from inventory.models import Pattern
from inventory.summary import RawSite, TargetKind


def sites(source: str, module: str = "app") -> list[RawSite]:
    return extract_source(textwrap.dedent(source), "x.py", module).sites


def test_join_means_the_caller_waits() -> None:
    (site,) = sites(
        """
        import threading

        def work(): ...

        def view():
            t = threading.Thread(target=work)
            t.start()
            t.join(timeout=5)
        """
    )
    assert site.result_used is True
    assert site.result_use_lines == [9]
    assert site.detail == "started at line 8"


def test_threads_started_and_joined_through_a_list() -> None:
    (site,) = sites(
        """
        from threading import Thread

        def work(i): ...

        def view(items):
            threads = [Thread(target=work, args=(i,)) for i in items]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        """
    )
    assert site.pattern is Pattern.THREAD
    assert site.result_use_lines == [11]
    assert "started at line 9" in site.detail


def test_thread_not_started_here_is_still_reported() -> None:
    (site,) = sites(
        """
        import threading

        def make(work):
            return threading.Thread(target=print)
        """
    )
    assert site.target == "app.print"
    assert "start() not seen" in site.detail


def test_futures_waited_through_an_alias_are_not_sites() -> None:
    assert (
        sites(
            """
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor()

        def fetch(u): ...

        def view(urls):
            futures = []
            for u in urls:
                futures.append(pool.submit(fetch, u))
            results = pool.map(fetch, urls)
            for r in results:
                print(r)
            return [f.result() for f in futures]
        """
        )
        == []
    )


def test_with_on_an_existing_executor_waits() -> None:
    assert (
        sites(
            """
        from concurrent.futures import ThreadPoolExecutor

        def fetch(u): ...

        def view(urls):
            ex = ThreadPoolExecutor()
            with ex:
                ex.submit(fetch, urls[0])
        """
        )
        == []
    )


def test_thread_subclass_from_another_module() -> None:
    (site,) = sites(
        """
        from .workers import Indexer

        def view(doc_id):
            worker = Indexer(doc_id, full=True)
            worker.start()
            worker.join()
        """,
        module="shop.views",
    )
    # The class, not its run(): the classifier checks the bases it cannot see from here.
    assert (site.target, site.target_kind) == (
        "shop.workers.Indexer",
        TargetKind.THREAD_SUBCLASS,
    )
    assert [(a.name, a.source) for a in site.arguments] == [("#0", "doc_id"), ("full", "True")]
    assert site.result_use_lines == [7]


def test_non_thread_start_is_not_a_site() -> None:
    assert (
        sites(
            """
        class Engine:
            def start(self): ...

        def view(server):
            Engine().start()
            server.start()
        """
        )
        == []
    )


def test_consumer_loops_in_methods_are_not_jobs() -> None:
    assert (
        sites(
            """
        import queue
        import threading

        class Worker(threading.Thread):
            def __init__(self):
                super().__init__()
                self.q = queue.Queue()

            def run(self):
                while True:
                    self.handle(self.q.get())

        class Service:
            def __init__(self):
                self._thread = threading.Thread(target=self._loop, daemon=True)
                self._thread.start()
                Worker().start()

            def _loop(self):
                while True:
                    conn, _ = self.sock.accept()
        """
        )
        == []
    )


def test_module_level_sites_have_no_enclosing_function() -> None:
    (site,) = sites(
        """
        import threading

        def warm(): ...

        threading.Thread(target=warm).start()
        """
    )
    assert site.enclosing_function is None
    assert site.handler is None


def test_sites_in_nested_functions_name_them() -> None:
    (site,) = sites(
        """
        import asyncio

        async def ping(): ...

        def outer():
            async def inner():
                asyncio.create_task(ping())
            return inner
        """
    )
    assert site.enclosing_function == "app.outer.<locals>.inner"


def test_run_in_executor_result_bound_and_used() -> None:
    (site,) = sites(
        """
        import asyncio

        def load(key): ...

        async def view(key):
            loop = asyncio.get_event_loop()
            fut = loop.run_in_executor(None, load, key)
            value = await fut
            return value
        """
    )
    assert site.pattern is Pattern.RUN_IN_EXECUTOR
    assert site.result_used is True
    assert site.result_use_lines == [9]


def test_site_span_covers_the_call() -> None:
    (site,) = sites(
        """
        from django.db import transaction

        def view(order_id):
            transaction.on_commit(
                lambda: notify(order_id)
            )
        """
    )
    assert (site.span.line, site.span.column, site.span.end_line) == (5, 4, 7)
    assert site.target_source == "lambda: notify(order_id)"


def test_celery_calls_are_never_sites() -> None:
    assert (
        sites(
            """
        from .tasks import send

        def view(user_id):
            send.delay(user_id)
            send.apply_async((user_id,), countdown=5)
            send.s(user_id).delay()
            send.si(user_id).apply_async()
            send.delay_on_commit(user_id)
        """
        )
        == []
    )


def test_tasks_in_a_list_literal_then_waited() -> None:
    assert (
        sites(
            """
            import asyncio

            async def a(): ...
            async def b(): ...

            async def handle():
                tasks = [asyncio.create_task(a()), asyncio.create_task(b())]
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            """
        )
        == []
    )


def test_results_waited_for_in_the_same_expression() -> None:
    assert (
        sites(
            """
            from concurrent.futures import ThreadPoolExecutor
            from multiprocessing import Pool

            executor = ThreadPoolExecutor()
            pool = Pool()

            def prompt(): ...

            def view():
                line = executor.submit(prompt).result()
                value = pool.apply_async(prompt).get(timeout=1)
                return line, value
            """
        )
        == []
    )


def test_event_loops_in_threads_are_infrastructure() -> None:
    assert (
        sites(
            """
            import asyncio
            import threading

            def start():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, daemon=True).start()
            """
        )
        == []
    )


def test_work_written_inside_gather_or_wait_is_waited_for() -> None:
    found = sites(
        """
        import asyncio
        from concurrent.futures import ThreadPoolExecutor, wait

        pool = ThreadPoolExecutor()

        async def fetch(u): ...
        def load(u): ...

        async def handle(urls, loop):
            await asyncio.gather(*(asyncio.create_task(fetch(u)) for u in urls))
            wait([pool.submit(load, u) for u in urls])
            await asyncio.wait_for(loop.run_in_executor(None, load, urls[0]), timeout=5)
        """
    )
    assert [(s.pattern, s.result_used, s.detail) for s in found] == [
        (Pattern.RUN_IN_EXECUTOR, True, "waited for")
    ]


def test_create_task_on_a_loop_fetched_in_place() -> None:
    (site,) = sites(
        """
        import asyncio

        async def ping(): ...

        def schedule():
            asyncio.get_event_loop().create_task(ping())
        """
    )
    assert (site.pattern, site.target) == (Pattern.ASYNCIO_TASK, "app.ping")


def test_a_spawn_inside_a_lambda_is_a_site_but_not_the_functions_call() -> None:
    """``task.add_done_callback(lambda t: asyncio.create_task(cleanup(t)))`` starts work
    in-process when the lambda runs: a site. Its value is the lambda's, which a done callback
    discards (asyncio ignores what a callback returns), so the result is unused; a lambda
    stored for a caller the scan cannot see returns it to that caller (read as used). The
    lambda's calls are still not the enclosing function's own calls."""
    summary = extract_source(
        textwrap.dedent(
            """
            import asyncio

            async def cleanup(task_id): ...

            async def view(task, subscriptions, task_id):
                task.add_done_callback(lambda t: asyncio.create_task(cleanup(task_id)))
                subscriptions[task_id] = lambda: asyncio.ensure_future(cleanup(task_id))
                asyncio.get_running_loop().add_signal_handler(15, lambda: asyncio.ensure_future(cleanup(1)))
            """
        ),
        "x.py",
        "app",
    )
    found = [(s.span.line, s.pattern, s.target, s.result_used) for s in summary.sites]
    assert found == [
        (7, Pattern.ASYNCIO_TASK, "app.cleanup", False),
        (8, Pattern.ASYNCIO_TASK, "app.cleanup", True),
        (9, Pattern.ASYNCIO_TASK, "app.cleanup", False),
    ]
    (view,) = [f for f in summary.functions if f.name == "view"]
    assert {c.target for c in view.calls} == {
        "?.add_done_callback",
        "asyncio.get_running_loop",
        "asyncio.AbstractEventLoop.add_signal_handler",
    }

"""Facts: augmented assignments, SQL literals, dynamic dispatch, endless loops."""

from __future__ import annotations

import textwrap

from inventory._extract import extract_source
from inventory.summary import Fact, FactKind


def facts(source: str) -> list[Fact]:
    summary = extract_source(textwrap.dedent(source), "x.py", "app")
    return [fact for function in summary.functions for fact in function.facts]


def kinds(source: str) -> list[tuple[FactKind, str]]:
    return [(fact.kind, fact.target) for fact in facts(source)]


def test_augmented_assignments() -> None:
    found = kinds(
        """
        counter = 0

        def view(order, counts, key, n):
            global counter
            order.total += 5
            counts[key] += 1
            counter += 1
            n += 1
            order.visits = order.visits + 1
        """
    )
    assert found == [
        (FactKind.AUGASSIGN_ATTR, "order.total"),
        (FactKind.AUGASSIGN_SUBSCRIPT, "counts[key]"),
        (FactKind.AUGASSIGN_GLOBAL, "counter"),
        (FactKind.AUGASSIGN_ATTR, "order.visits"),
        # the module's global, changed in this process (``_process_state``)
        (FactKind.MODULE_STATE, "app.counter"),
    ]


def test_sql_literals_keep_their_text() -> None:
    found = facts(
        '''
        def view(cursor, order_id):
            """Update the order set of the user (prose, not SQL)."""
            cursor.execute("UPDATE orders SET paid = true WHERE id = %s", [order_id])
            cursor.execute("""
                INSERT INTO audit (order_id) VALUES (%s)
                ON CONFLICT DO NOTHING""", [order_id])
            cursor.execute(f"DELETE FROM carts WHERE id = {order_id}")
            cursor.execute("select * from orders where id = 1")
            label = "Update the order please"
        '''
    )
    texts = [fact.text for fact in found if fact.kind is FactKind.SQL_LITERAL]
    assert texts[0] == "UPDATE orders SET paid = true WHERE id = %s"
    assert texts[1].startswith("INSERT INTO audit")
    assert texts[2].startswith("DELETE FROM carts")
    assert texts[3] == "select * from orders where id = 1"
    assert len(texts) == 4


def test_dynamic_dispatch() -> None:
    found = kinds(
        """
        import importlib

        HOOKS = {}

        def view(obj, name, hook):
            getattr(obj, name)()
            HOOKS[name](obj)
            importlib.import_module(name)
            hook(obj)
            obj.method()
        """
    )
    assert found == [
        (FactKind.DYNAMIC_DISPATCH, "getattr"),
        (FactKind.DYNAMIC_DISPATCH, "HOOKS"),
        (FactKind.DYNAMIC_DISPATCH, "parameter hook"),
    ]


def test_loop_forever_only_without_break_or_return() -> None:
    found = kinds(
        """
        def worker(q):
            while True:
                item = q.get()
                for x in item:
                    break

        def retry():
            while True:
                if attempt():
                    return

        def poll():
            while 1:
                if done():
                    break
        """
    )
    # worker's loop consumes a queue each round: a service, besides a loop forever
    assert found == [(FactKind.LOOP_FOREVER, ""), (FactKind.SERVICE_LOOP, "")]


def test_a_stream_read_again_forever_is_a_service() -> None:
    """``while True: async for m in pubsub.listen()``: the stream is read again each time it
    ends (a sleep to back off after a failure changes nothing); a loop forever that also
    sleeps each round polls (``async for page in fetch(): ...; await asyncio.sleep(60)``):
    a loop forever, not a service; a stream read once (no loop around it) is a stream fact."""
    found = kinds(
        """
        import asyncio

        async def listen(redis):
            while True:
                try:
                    pubsub = redis.pubsub()
                    async for message in pubsub.listen():
                        handle(message)
                except ConnectionError:
                    await asyncio.sleep(5)

        async def poll(client):
            while True:
                async for page in client.pages():
                    handle(page)
                await asyncio.sleep(60)

        async def once(client):
            async for chunk in client.stream():
                handle(chunk)

        async def ping():
            while True:
                await client.post("/ping")
                await asyncio.sleep(60)
        """
    )
    assert found == [
        (FactKind.LOOP_FOREVER, ""),
        (FactKind.SERVICE_LOOP, ""),
        (FactKind.LOOP_FOREVER, ""),
        (FactKind.STREAM_LOOP, ""),
        (FactKind.LOOP_FOREVER, ""),
    ]


def test_fact_text_is_short() -> None:
    long_sql = "INSERT INTO t (a) VALUES " + ", ".join(["(1)"] * 200)
    (fact,) = facts(f"def view(c):\n    c.execute({long_sql!r})\n")
    assert len(fact.text) == 200


def _state(source: str) -> dict[str, list[str]]:
    """Per function, the targets of its MODULE_STATE facts."""
    summary = extract_source(textwrap.dedent(source), "app.py", "app")
    return {
        fn.qualname: [f.target for f in fn.facts if f.kind == FactKind.MODULE_STATE]
        for fn in summary.functions
    }


def test_class_attributes_changed_in_any_spelling_are_process_state() -> None:
    found = _state(
        """
        class Registry:
            items = []
            by_key = {}
            count = 0

            @classmethod
            def reset(cls):
                cls.by_key = {}

            def forget(self, key):
                del type(self).by_key[key]

            def bump(self):
                self.__class__.count += 1

            def remember(self, key, value):
                self.value = value          # the instance's own: no class state
                Registry.by_key[key] = value

        def register(x):
            Registry.items.append(x)

        def shadowed(x):
            Registry = {}                   # a local of that name: not the class
            Registry["k"] = x
        """
    )
    assert found["app.Registry.reset"] == ["app.Registry.by_key"]
    assert found["app.Registry.forget"] == ["app.Registry.by_key"]
    assert found["app.Registry.bump"] == ["app.Registry.count"]
    assert found["app.Registry.remember"] == ["app.Registry.by_key"]
    assert found["app.register"] == ["app.Registry.items"]
    assert found["app.shadowed"] == []


def test_a_class_attribute_read_where_it_is_filled_is_a_memo() -> None:
    found = _state(
        """
        class Client:
            _instance = None
            _cache = {}

            @classmethod
            def get(cls):
                if cls._instance is None:
                    cls._instance = cls()
                return cls._instance

            def lookup(self, key):
                if key not in type(self)._cache:
                    type(self)._cache[key] = key.upper()
                return type(self)._cache[key]

            def evict(self, key):
                if key in type(self)._cache:
                    type(self)._cache.pop(key)   # a removal always counts
        """
    )
    assert found["app.Client.get"] == []
    assert found["app.Client.lookup"] == []
    assert found["app.Client.evict"] == ["app.Client._cache"]


def test_a_cache_one_method_reads_and_another_fills_is_a_memo_but_its_reset_counts() -> None:
    found = _state(
        """
        class EventTypes:
            _pk_map = {}

            def _set(self, name, pk):
                self.__class__._pk_map[name] = pk

            def clear(self):
                self.__class__._pk_map = {}

            def pk_for(self, name):
                pk = self._pk_map.get(name)
                if pk is None:
                    pk = len(name)
                    on_commit(lambda: self._set(name, pk))
                return pk


        class Registry:
            items = []

            def add(self, item):
                self.__class__.items.append(item)
        """
    )
    assert found["app.EventTypes._set"] == []  # filled for pk_for, which reads it
    assert found["app.EventTypes.clear"] == ["app.EventTypes._pk_map"]
    assert found["app.Registry.add"] == ["app.Registry.items"]  # nothing of it reads it


def test_the_request_session_written_is_request_state_not_process_state() -> None:
    """Flask's ``session`` belongs to the request being served, not to the process: its
    writes are facts of their own kind, so the classifier never reads them as a container."""
    summary = extract_source(
        textwrap.dedent(
            """
            from flask import session

            CACHE = {}

            def login(user):
                session["user"] = user.id
                session.permanent = True
                CACHE[user.id] = user
            """
        ),
        "app.py",
        "app",
    )
    (login,) = summary.functions
    found = sorted((f.kind.value, f.target) for f in login.facts)
    assert found == [
        ("module_state", "app.CACHE"),
        ("request_state", "flask.session"),
        ("request_state", "flask.session"),
    ]


def test_loops_that_end_are_neither_forever_nor_services() -> None:
    """Each of these returns, so none may read as a loop that runs until the process stops
    (``migrator apply`` would refuse its job as one that never returns): a queue drained
    until ``queue.Empty`` breaks, an iterator stepped with ``anext`` until it is exhausted,
    a wait on a state bounded by a deadline; a loop on a stop flag stays a service."""
    found = kinds(
        """
        import asyncio
        import queue
        import time

        HELD: queue.Queue = queue.Queue()

        def drain(target):
            while True:
                try:
                    target.put(HELD.get(block=False))
                except queue.Empty:
                    break

        async def consume_rest(it):
            try:
                while True:
                    await anext(it)
            except StopAsyncIteration:
                return

        async def wait_ready(session):
            now = time.perf_counter()
            while "ok" not in session.session_state and time.perf_counter() - now < 5:
                await asyncio.sleep(0.1)

        async def serve(self):
            while not self.closing:
                await asyncio.sleep(1)

        def watch(self):
            while self.runtime_state != "stopped":
                time.sleep(1)

        def pump(self, consumer):
            while True:
                handle(consumer.next(5))
        """
    )
    # the stop flag, a state whose name merely contains "time", and a consumer's own
    # ``next(timeout)`` method (no iterator step) run until the process stops
    assert found == [
        (FactKind.SERVICE_LOOP, ""),
        (FactKind.SERVICE_LOOP, ""),
        (FactKind.LOOP_FOREVER, ""),
    ]


def test_a_stop_flag_waited_with_a_timeout_is_still_a_service() -> None:
    """``while not quit.wait(timeout=5)``: the timeout paces the rounds, it bounds nothing."""
    found = kinds(
        """
        def run(self):
            while not self._quit.wait(timeout=5):
                self.flush()
        """
    )
    assert found == [(FactKind.SERVICE_LOOP, "")]

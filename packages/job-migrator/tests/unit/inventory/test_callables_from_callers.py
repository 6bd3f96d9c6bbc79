"""A function handed over as an argument: ``cb(x)`` in the callee is that function.

``apply_to(x, fn=post_hook)`` then ``fn(x)``, or ``Runner(post_hook)`` whose ``__init__``
keeps ``self._callback = callback`` and a method calls ``self._callback(x)``: the call was
"only known at run time" (a job reaching it `unknown`), although every project call hands
the same project function. Typed from the callers as a parameter's class is
(``_classify/_arguments.py``), under the same closed-world rules. Callers that hand
different functions (a few) each run their own: the census found 178 unknown jobs calling
through a parameter, in 40 packages. A value the scan cannot name, or more than a few
functions, leave the call dynamic.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]

JOBS = """import threading

import requests

from app.hooks import post_hook, tidy


def apply_to(x, fn):
    return fn(x)


def run_with(cb, x):
    cb(x)


class Runner:
    def __init__(self, callback):
        self._callback = callback

    def run(self, x):
        self._callback(x)


def by_keyword(x):
    apply_to(x, fn=post_hook)


def by_position(x):
    apply_to(x + 1, post_hook)


def held(x):
    Runner(post_hook).run(x)


def posting(x):
    run_with(post_hook, x)


def tidying(x):
    run_with(tidy, x)


def view(request):
    for_x = request.GET["x"]
    threading.Thread(target=by_keyword, args=(for_x,)).start()
    threading.Thread(target=by_position, args=(for_x,)).start()
    threading.Thread(target=held, args=(for_x,)).start()
    threading.Thread(target=posting, args=(for_x,)).start()
    threading.Thread(target=tidying, args=(for_x,)).start()
"""
HOOKS = """import requests


def post_hook(x):
    requests.post("https://hooks.example.com", json={"x": x})


def tidy(x):
    return str(x).strip()
"""


def _jobs(
    scan_project: Scanner, jobs: str = JOBS
) -> dict[str, tuple[Idempotency, set[EffectKind]]]:
    inventory = scan_project({"app/__init__.py": "", "app/jobs.py": jobs, "app/hooks.py": HOOKS})
    return {
        j.qualname.rsplit(".", 1)[-1]: (j.idempotency, {e.kind for e in j.effects})
        for j in inventory.jobs
    }


def _started(*targets: str, args: str = "(1,)", view: str = "view2") -> str:
    """A request handler starting each of ``targets`` in a thread: what makes them jobs."""
    starts = "".join(f"    threading.Thread(target={t}, args={args}).start()\n" for t in targets)
    return f"\n\n\ndef {view}(request):\n{starts}"


def test_a_function_every_caller_hands_over_is_what_the_callee_calls(
    scan_project: Scanner,
) -> None:
    jobs = _jobs(scan_project)
    for name in ("by_keyword", "by_position"):
        assert jobs[name] == (Idempotency.NON_IDEMPOTENT, {EffectKind.HTTP_POST}), name


def test_a_function_kept_by_the_constructor_is_what_the_method_calls(
    scan_project: Scanner,
) -> None:
    assert _jobs(scan_project)["held"] == (Idempotency.NON_IDEMPOTENT, {EffectKind.HTTP_POST})


def test_callers_handing_different_functions_each_run_their_own(
    scan_project: Scanner,
) -> None:
    # run_with gets post_hook from one caller and tidy from another: which runs depends on
    # the caller, so each job runs the one it hands, and neither borrows the other's
    jobs = _jobs(scan_project)
    assert jobs["posting"] == (Idempotency.NON_IDEMPOTENT, {EffectKind.HTTP_POST})
    assert jobs["tidying"] == (Idempotency.IDEMPOTENT, set())


def test_a_caller_handing_on_its_own_parameter_leaves_it_to_its_callers(
    scan_project: Scanner,
) -> None:
    jobs = (
        JOBS
        + (
            "\n\ndef relay(cb, x):\n"
            "    run_with(cb, x)\n\n\n"
            "def relayed_post(x):\n"
            "    relay(post_hook, x)\n\n\n"
            "def relayed_tidy(x):\n"
            "    relay(tidy, x)\n"
        )
        + _started("relayed_post", "relayed_tidy")
    )
    found = _jobs(scan_project, jobs)
    assert found["relayed_post"] == (Idempotency.NON_IDEMPOTENT, {EffectKind.HTTP_POST})
    assert found["relayed_tidy"] == (Idempotency.IDEMPOTENT, set())


def test_a_job_a_site_starts_with_a_function_stays_a_gap(scan_project: Scanner) -> None:
    # a site starting run_with itself makes run_with a job run with whatever the site
    # hands it: the scan does not type a site's callable, so run_with, and the jobs that
    # reach what it calls, are unknown again, never idempotent
    jobs = JOBS + _started("run_with", args="(tidy, 1)")
    found = _jobs(scan_project, jobs)
    assert found["run_with"][0] is Idempotency.UNKNOWN
    assert found["tidying"][0] is Idempotency.UNKNOWN
    assert found["posting"][0] is not Idempotency.IDEMPOTENT


def test_too_many_different_functions_leave_the_call_dynamic(scan_project: Scanner) -> None:
    hooks = "".join(f"\n\ndef hook{i}(x):\n    return x\n" for i in range(5))
    calls = "".join(f"    run_with(hook{i}, x)\n" for i in range(5))
    jobs = JOBS + hooks + f"\n\ndef many(x):\n{calls}" + _started("many")
    found = _jobs(scan_project, jobs)
    assert found["many"][0] is Idempotency.UNKNOWN
    assert found["tidying"][0] is Idempotency.UNKNOWN


def test_a_caller_handing_what_the_scan_cannot_name_types_nothing(
    scan_project: Scanner,
) -> None:
    jobs = (
        JOBS
        + ("\n\ndef dynamic(x, chosen):\n    apply_to(x, fn=chosen)\n")
        + _started("dynamic", args="(1, request.hook)")
    )
    found = _jobs(scan_project, jobs)
    # apply_to may now run whatever ``chosen`` is: by_keyword no longer knows it posts
    assert found["by_keyword"][0] is Idempotency.UNKNOWN
    assert found["dynamic"][0] is Idempotency.UNKNOWN


def test_a_lambda_or_a_bound_method_handed_by_another_caller_types_nothing(
    scan_project: Scanner,
) -> None:
    for handed in ("lambda v: post_hook(v)", "Runner(tidy).run"):
        jobs = JOBS + f"\n\ndef other(x):\n    apply_to(x, {handed})\n" + _started("other")
        assert _jobs(scan_project, jobs)["by_keyword"][0] is Idempotency.UNKNOWN, handed


def test_a_recursive_helper_handing_on_its_own_parameter_keeps_the_callers_function(
    scan_project: Scanner,
) -> None:
    """``walk(tree, visit)`` calls itself with ``visit`` for each child: that call hands on
    what ``walk`` was given, so the function its one outside caller hands is what runs."""
    jobs = (
        "import threading\n\n"
        "from app.hooks import post_hook\n\n\n"
        "def walk(tree, visit):\n"
        "    for child in tree.get('children', []):\n"
        "        walk(child, visit)\n"
        "    visit(tree.get('name'))\n\n\n"
        "def announce(tree):\n"
        "    walk(tree, post_hook)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=announce, args=({'name': 'a'},)).start()\n"
    )
    found = _jobs(scan_project, jobs)
    assert found["announce"] == (Idempotency.NON_IDEMPOTENT, {EffectKind.HTTP_POST})


def test_a_call_leaving_a_callable_to_its_default_types_it_for_no_one(
    scan_project: Scanner,
) -> None:
    """``def notify_with(x, send=post_hook)``: a call passing nothing runs the default, so
    the callers that hand ``tidy`` do not say what every call runs."""
    jobs = (
        "import threading\n\n"
        "from app.hooks import post_hook, tidy\n\n\n"
        "def notify_with(x, send=post_hook):\n"
        "    send(x)\n\n\n"
        "def handed(x):\n"
        "    notify_with(x, send=tidy)\n\n\n"
        "def defaulted(x):\n"
        "    notify_with(x)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=handed, args=(1,)).start()\n"
        "    threading.Thread(target=defaulted, args=(1,)).start()\n"
    )
    found = _jobs(scan_project, jobs)
    assert found["defaulted"][0] is not Idempotency.IDEMPOTENT
    assert found["handed"][0] is not Idempotency.IDEMPOTENT


def test_a_method_handed_different_functions_by_position_and_by_keyword(
    scan_project: Scanner,
) -> None:
    """The callee is a method (``self`` not passed), handed its callable by position in
    one caller and by keyword in the other: each caller still runs its own."""
    jobs = (
        "import threading\n\n"
        "from app.hooks import post_hook, tidy\n\n\n"
        "class Service:\n"
        "    def run_with(self, x, cb):\n"
        "        cb(x)\n\n"
        "    def post(self, x):\n"
        "        self.run_with(x, post_hook)\n\n"
        "    def clean(self, x):\n"
        "        self.run_with(x, cb=tidy)\n\n\n"
        "SERVICE = Service()\n\n\n"
        "def posting(x):\n"
        "    SERVICE.post(x)\n\n\n"
        "def cleaning(x):\n"
        "    SERVICE.clean(x)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=posting, args=(1,)).start()\n"
        "    threading.Thread(target=cleaning, args=(1,)).start()\n"
    )
    found = _jobs(scan_project, jobs)
    assert found["posting"] == (Idempotency.NON_IDEMPOTENT, {EffectKind.HTTP_POST})
    assert found["cleaning"] == (Idempotency.IDEMPOTENT, set())


def test_a_function_only_kept_by_the_callee_is_not_run_by_its_caller(
    scan_project: Scanner,
) -> None:
    """``register(post_hook)`` keeps the function for later (a registry, a list of
    listeners): the caller hands it over but nothing runs it in this call, so the caller
    does not own its POST, whichever functions the other callers hand."""
    jobs = (
        "import threading\n\n"
        "from app.hooks import post_hook, tidy\n\n"
        "HOOKS = []\n\n\n"
        "def register(hook):\n"
        "    HOOKS.append(hook)\n\n\n"
        "def plug_post(x):\n"
        "    register(post_hook)\n\n\n"
        "def plug_tidy(x):\n"
        "    register(tidy)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=plug_post, args=(1,)).start()\n"
        "    threading.Thread(target=plug_tidy, args=(1,)).start()\n"
    )
    found = _jobs(scan_project, jobs)
    assert EffectKind.HTTP_POST not in found["plug_post"][1]

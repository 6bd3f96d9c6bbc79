"""Objects and attributes whose class the library documents: a path's ``parent`` is a path, a
``CompletedProcess``'s ``stdout`` is its captured output (a string), Flask-SQLAlchemy's
``db.session`` a session; ``hashlib.sha256()`` a hash object, ``webbrowser.get()`` a browser
controller. A method called through them is the class's (opening a browser starts a program).

Adversaries: the same attribute on a project class, and on an untyped value, stay undecided.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory, Job
from tests.unit.inventory.conftest import Verdicts, thread_views


def _jobs(
    scan_project: Callable[[dict[str, str]], Inventory], source: str, names: tuple[str, ...]
) -> dict[str, Job]:
    """Each job of ``app/jobs.py`` (``source``) by its last name, each of ``names`` started
    from a view in a thread."""
    files = {"app/__init__.py": "", "app/jobs.py": source, "app/views.py": thread_views(names)}
    return {job.qualname.rsplit(".", 1)[-1]: job for job in scan_project(files).jobs}


JOBS = (
    "import subprocess\n"
    "from pathlib import Path\n\n"
    "from app.helpers import Tree\n\n\n"
    "def config_root(start):\n"
    "    here = Path(start)\n"
    "    return here.parent.parent.resolve()\n\n\n"
    "def head_sha(result: subprocess.CompletedProcess):\n"
    "    return result.stdout.strip().split()\n\n\n"
    "def project_parent(start):\n"
    "    return Tree(start).parent.resolve()\n\n\n"
    "def untyped(box):\n"
    "    return box.parent.resolve()\n"
)
HELPERS = (
    "import requests\n\n\n"
    "class Node:\n"
    "    def resolve(self):\n"
    "        requests.post('https://hooks.example.com/resolve')\n\n\n"
    "class Tree:\n"
    "    def __init__(self, start):\n"
    "        self.parent = start\n"
)
NAMES = ("config_root", "head_sha", "project_parent", "untyped")


def test_methods_through_documented_attributes_are_the_class_methods(
    app_verdicts: Verdicts,
) -> None:
    verdicts = app_verdicts(jobs=JOBS, helpers=HELPERS, views=thread_views(NAMES))
    assert {name: verdicts[name] for name in NAMES} == {
        "config_root": Idempotency.IDEMPOTENT,
        "head_sha": Idempotency.IDEMPOTENT,
        "project_parent": Idempotency.UNKNOWN,
        "untyped": Idempotency.UNKNOWN,
    }


CALLS = (
    "import requests\n"
    "from pydantic import SecretStr\n\n\n"
    "def fetch_status(token: SecretStr, url):\n"
    "    session = requests.session()\n"
    "    session.headers['Authorization'] = token.get_secret_value()\n"
    "    return session.get(url).status_code\n"
)


def test_a_session_made_by_requests_session_and_a_secret_read(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=CALLS, views=thread_views(("fetch_status",)))
    assert verdicts["fetch_status"] == Idempotency.IDEMPOTENT  # one GET


LIBRARY_OBJECTS = (
    "import hashlib\n"
    "import hmac\n"
    "import webbrowser\n\n"
    "import uwsgi\n\n\n"
    "def fingerprint(parts, secret):\n"
    "    digest = hashlib.sha256()\n"
    "    for part in parts:\n"
    "        digest.update(part)\n"
    "    signer = hmac.new(secret, digestmod='sha256')\n"
    "    signer.update(digest.digest())\n"
    "    return signer.hexdigest(), uwsgi.opt.get('socket')\n\n\n"
    "def show(url):\n"
    "    webbrowser.get().open(url)\n\n\n"
    "def show_default(url):\n"
    "    webbrowser.open(url)\n"
)


def test_digest_objects_uwsgi_options_and_the_browser(
    scan_project: Callable[[dict[str, str]], Inventory],
) -> None:
    jobs = _jobs(scan_project, LIBRARY_OBJECTS, ("fingerprint", "show", "show_default"))
    assert jobs["fingerprint"].idempotency == Idempotency.IDEMPOTENT
    # opening a browser starts another program: a subprocess, whatever spelling
    for name in ("show", "show_default"):
        assert [e.kind.value for e in jobs[name].effects] == ["subprocess"], name


LOADERS = (
    "from sqlalchemy import select\n"
    "from sqlalchemy.orm import Session, joinedload, selectinload\n"
    "from sqlalchemy.orm.strategy_options import noload\n\n"
    "from app.models import Order\n\n\n"
    "def order_lines(session: Session, order_id):\n"
    "    options = [\n"
    "        selectinload(Order.lines).joinedload(Order.customer).load_only(Order.id),\n"
    "        noload(Order.notes),\n"
    "    ]\n"
    "    return session.scalars(select(Order).options(*options)).all()\n"
)
ORDER_MODEL = (
    "from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column\n\n\n"
    "class Base(DeclarativeBase):\n"
    "    pass\n\n\n"
    "class Order(Base):\n"
    "    __tablename__ = 'orders'\n"
    "    id: Mapped[int] = mapped_column(primary_key=True)\n"
)


def test_sqlalchemy_loader_options_build_a_query_option(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=LOADERS, models=ORDER_MODEL, views=thread_views(("order_lines",)))
    assert verdicts["order_lines"] == Idempotency.IDEMPOTENT  # one SELECT


FILES = (
    "import io\n"
    "import os\n"
    "from pathlib import Path\n\n\n"
    "def read_config(root):\n"
    "    os.mkdir(os.path.join(root, 'cache'))\n"
    "    with Path(root, 'config.toml').open() as f, io.open(os.path.join(root, 'x')) as g:\n"
    "        return f.read() + g.read()\n\n\n"
    "def append_log(root, line):\n"
    "    with Path(root, 'log.txt').open('a') as f:\n"
    "        f.write(line)\n\n\n"
    "def write_state(root, text):\n"
    "    with Path(root, 'state.txt').open(mode='w') as f:\n"
    "        f.write(text)\n\n\n"
    "def some_mode(root, mode):\n"
    "    with Path(root, 'state.txt').open(mode) as f:\n"
    "        return f\n"
)


def test_a_path_opened_is_judged_by_its_mode(
    scan_project: Callable[[dict[str, str]], Inventory],
) -> None:
    jobs = _jobs(scan_project, FILES, ("read_config", "append_log", "write_state", "some_mode"))
    assert jobs["read_config"].idempotency == Idempotency.IDEMPOTENT
    assert [e.kind.value for e in jobs["append_log"].effects] == ["file_append"]
    assert jobs["append_log"].idempotency == Idempotency.NON_IDEMPOTENT
    assert [e.kind.value for e in jobs["write_state"].effects] == ["file_write"]
    assert jobs["some_mode"].idempotency == Idempotency.UNKNOWN  # a mode the scan cannot read


STDLIB_AND_FRIENDS = (
    "import pwd\n"
    "import os\n"
    "import traceback\n\n"
    "import bcrypt\n"
    "import gevent\n"
    "import simplejson\n"
    "from ipware import get_client_ip\n\n\n"
    "def check_login(name, password, stored, path, request=None):\n"
    "    pwd.getpwnam(name)\n"
    "    get_client_ip(request)\n"
    "    with open(path) as f:\n"
    "        settings = simplejson.load(f)\n"
    "    try:\n"
    "        return bcrypt.checkpw(password, stored), settings\n"
    "    except ValueError as exc:\n"
    "        traceback.print_exception(exc)\n\n\n"
    "def new_hash(password):\n"
    "    return bcrypt.hashpw(password, bcrypt.gensalt())\n\n\n"
    "def nap():\n"
    "    gevent.sleep(1)\n\n\n"
    "def show(path):\n"
    "    os.startfile(path)\n"
)


def test_documented_library_calls_say_what_they_do(
    scan_project: Callable[[dict[str, str]], Inventory],
) -> None:
    names = ("check_login", "new_hash", "nap", "show")
    jobs = _jobs(scan_project, STDLIB_AND_FRIENDS, names)
    assert jobs["check_login"].idempotency == Idempotency.IDEMPOTENT
    assert {name: sorted(e.kind.value for e in jobs[name].effects) for name in names[1:]} == {
        "new_hash": ["random_id"],  # a random salt: another hash each run
        "nap": ["sleep"],
        "show": ["subprocess"],
    }


VALIDATED = (
    "from pydantic import BaseModel, TypeAdapter\n\n\n"
    "class Item(BaseModel):\n"
    "    name: str\n\n\n"
    "ITEMS = TypeAdapter(list[Item])\n\n\n"
    "def read_items(data, raw):\n"
    "    items = ITEMS.validate_python(data)\n"
    "    again = ITEMS.validate_json(raw)\n"
    "    return ITEMS.dump_python(items + again)\n"
)


def test_pydantic_core_validation_and_serialisation_are_pure(app_verdicts: Verdicts) -> None:
    """pydantic's TypeAdapter (read from the installed source) ends in pydantic-core's
    compiled SchemaValidator / SchemaSerializer: values in, values out."""
    verdicts = app_verdicts(jobs=VALIDATED, views=thread_views(("read_items",)))
    assert verdicts["read_items"] == Idempotency.IDEMPOTENT

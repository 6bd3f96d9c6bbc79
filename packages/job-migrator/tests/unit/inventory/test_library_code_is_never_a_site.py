"""A library's code is read where the project's calls reach it, and never reported as a site.

A form field of a library (``to_python`` opens an image) is a form hook by its shape, the same
shape that makes a project's form field a handler. Read from the environment, it once became
a request handler of its own: the scan reported a site located in ``site-packages`` (seen on
the census, tendenci: ``django.forms.fields.ImageField.to_python``), which no one can move.
A project view calling it is still the project's site, with the library's effect as evidence.
"""

from __future__ import annotations

from pathlib import Path

from inventory import Inventory, scan
from tests.unit.inventory.fake_venv import fake_venv, write_tree

LIBRARY = {
    "imgforms/__init__.py": "",
    "imgforms/fields.py": (
        "from django import forms\nfrom PIL import Image\n\n\n"
        "class ImageField(forms.FileField):\n"
        "    def to_python(self, data):\n"
        "        image = Image.open(data)\n"
        "        image.verify()\n"
        "        return data\n"
    ),
    "imgforms-1.0.dist-info/top_level.txt": "imgforms\n",
    "imgforms-1.0.dist-info/METADATA": "Name: imgforms\nVersion: 1.0\n",
}
SUBCLASS = (
    "from imgforms.fields import ImageField\n\n\n"
    "class AvatarField(ImageField):\n"
    "    def to_python(self, data):\n"
    "        return super().to_python(data)\n"
)
VIEW = (
    "from imgforms.fields import ImageField\n\n\n"
    "def upload(request):\n"
    "    ImageField().to_python(request.FILES['avatar'])\n"
)


def _scan(tmp_path: Path, module: str, source: str) -> Inventory:
    python = fake_venv(tmp_path / "env", LIBRARY)
    write_tree(tmp_path / "project", {"shop/__init__.py": "", f"shop/{module}.py": source})
    return scan(tmp_path / "project", use_cache=False, jobs=1, python=str(python))


def test_a_library_form_hook_is_no_site(tmp_path: Path) -> None:
    inventory = _scan(tmp_path, "forms", SUBCLASS)
    assert [s.location.path for s in inventory.sites] == []


def test_a_view_calling_the_library_hook_is_the_site(tmp_path: Path) -> None:
    inventory = _scan(tmp_path, "views", VIEW)
    assert [(s.location.path, s.enclosing_function) for s in inventory.sites] == [
        ("shop/views.py", "shop.views.upload")
    ]
    (job,) = inventory.jobs
    assert job.qualname == "imgforms.fields.ImageField.to_python"
    assert [e.api for e in job.effects] == ["PIL.Image.open"]

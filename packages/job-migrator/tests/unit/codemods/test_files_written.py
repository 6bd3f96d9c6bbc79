"""A moved job that writes files where it runs: apply says so beside the site it rewrites,
from the scan's own effects (the scan, then apply's planning, in memory)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
from inventory import scan

THUMBS = """from pathlib import Path

from PIL import Image

MEDIA = Path("/srv/media")


def make_thumbnail(image_id: int) -> None:
    with Image.open(MEDIA / f"{image_id}.img") as img:
        img.thumbnail((64, 64))
        img.save(MEDIA / f"{image_id}_64.png", format="PNG")


def store_upload(image_id: int, data: bytes) -> None:
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    default_storage.save(f"uploads/{image_id}.img", ContentFile(data))
"""

VIEWS = """import threading

from shop.thumbs import make_thumbnail, store_upload


def upload(request, image_id: int):
    threading.Thread(target=make_thumbnail, args=(image_id,)).start()
    threading.Thread(target=store_upload, args=(image_id, request.body)).start()
"""


def test_apply_says_a_moved_job_writes_files_where_it_runs(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = write_files({"shop/__init__.py": "", "shop/thumbs.py": THUMBS, "shop/views.py": VIEWS})
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    result = plan_apply(root, inventory, scanner=None)
    outcomes = {o.site.job.rsplit(".", 1)[-1]: o for o in result.outcomes}
    thumb = outcomes["make_thumbnail"]
    assert thumb.status is Status.REWRITTEN, thumb.reason
    assert (
        "writes files where it runs (`PIL.Image.Image.save` at shop/thumbs.py:11)" in thumb.reason
    )
    assert "arguments: image_id: JSON" in thumb.reason
    # a Django storage's save goes through the configured backend: no warning
    upload = outcomes["store_upload"]
    assert "writes files where it runs" not in upload.reason

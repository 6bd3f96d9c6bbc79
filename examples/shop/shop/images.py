"""Product images: the original upload and its thumbnails."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from shop.services import current

THUMB_SIZES = (64, 256)


def original_path(media_dir: Path, image_id: int) -> Path:
    return media_dir / "originals" / f"{image_id}.img"


def thumbnail_path(media_dir: Path, image_id: int, size: int) -> Path:
    return media_dir / "thumbs" / f"{image_id}_{size}.png"


def save_original(media_dir: Path, image_id: int, data: bytes) -> None:
    path = original_path(media_dir, image_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def make_thumbnail(image_id: int, size: int) -> None:
    """Job (idempotent: same input, same file at the same path, overwritten)."""
    media_dir = current().settings.media_dir
    dest = thumbnail_path(media_dir, image_id, size)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Write aside and rename, so that a reader never sees half a PNG.
    partial = dest.with_suffix(".part")
    with Image.open(original_path(media_dir, image_id)) as img:
        img.thumbnail((size, size))
        img.save(partial, format="PNG")
    partial.replace(dest)

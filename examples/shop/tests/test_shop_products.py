"""Products: cache warming, page views and thumbnails."""

from __future__ import annotations

import io

from PIL import Image
from shop.images import thumbnail_path
from shop.jobs import cached_product


def test_creating_a_product_warms_its_cache(client, product):
    assert cached_product(product["id"]) == {"name": "Mug", "price_cents": 1200}


def test_updating_a_product_rewarms_its_cache(client, product, wait_until):
    update = {"name": "Big mug", "price_cents": 1500, "stock": 3}

    response = client.put(f"/products/{product['id']}", json=update)

    assert response.json() == {"id": product["id"], **update}
    # Background work: done when the response arrives in-process, a little later from a queue.
    rewarmed = {"name": "Big mug", "price_cents": 1500}
    wait_until(lambda: cached_product(product["id"]) == rewarmed, message="the cache rewarm")


def test_showing_a_product_counts_each_page_view(client, product, wait_until):
    path = f"/products/{product['id']}"

    assert client.get(path).json()["name"] == "Mug"
    wait_until(lambda: client.get(f"{path}/views").json()["views"] == 1, message="one view")
    client.get(path)
    wait_until(lambda: client.get(f"{path}/views").json()["views"] == 2, message="two views")


def test_an_unknown_product_is_404(client):
    assert client.get("/products/999").status_code == 404
    assert (
        client.put("/products/999", json={"name": "x", "price_cents": 1, "stock": 1}).status_code
        == 404
    )


def test_uploading_an_image_makes_its_thumbnails(client, product, settings, wait_until):
    png = io.BytesIO()
    Image.new("RGB", (640, 480), "teal").save(png, format="PNG")

    response = client.post(
        f"/products/{product['id']}/images",
        files={"file": ("mug.png", png.getvalue(), "image/png")},
    )

    assert response.status_code == 202
    image_id = response.json()["image_id"]
    for size in (64, 256):
        thumb = thumbnail_path(settings.media_dir, image_id, size)
        wait_until(thumb.exists, message=f"thumbnail {thumb.name}")
        with Image.open(thumb) as img:
            assert max(img.size) == size
            assert img.format == "PNG"

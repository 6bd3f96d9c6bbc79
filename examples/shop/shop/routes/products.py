"""Products, their images and their page views."""

from __future__ import annotations

import asyncio
from dataclasses import asdict

from fastapi import APIRouter, BackgroundTasks, UploadFile

from shop import workers
from shop.db import connect
from shop.deps import ServicesDep
from shop.images import THUMB_SIZES, save_original
from shop.jobs import CacheWarmer, cached_product, make_thumbnail, warm_product_cache
from shop.models import ProductIn
from shop.repo import insert_image, insert_product, load_product, save_product

from ..analytics import page_views, record_page_view

router = APIRouter()

# asyncio keeps only weak references to tasks: hold them until they are done.
_PENDING: set[asyncio.Task[None]] = set()


@router.post("/products", status_code=201)
def create_product(body: ProductIn, services: ServicesDep) -> dict[str, object]:
    with connect(services.settings.database) as conn:
        product = insert_product(conn, body.name, body.price_cents, body.stock)
    # Site: a Thread subclass whose run() is the job.
    CacheWarmer(product.id).start()
    return asdict(product)


@router.put("/products/{product_id}")
def update_product(
    product_id: int, body: ProductIn, background_tasks: BackgroundTasks, services: ServicesDep
) -> dict[str, object]:
    with connect(services.settings.database) as conn:
        product = load_product(conn, product_id)
        product.name, product.price_cents, product.stock = body.name, body.price_cents, body.stock
        save_product(conn, product)
    # Site: BackgroundTasks with a lambda.
    background_tasks.add_task(lambda: warm_product_cache(product_id))
    return asdict(product)


@router.get("/products/{product_id}")
async def show_product(product_id: int, services: ServicesDep) -> dict[str, object]:
    shown = cached_product(product_id)
    if shown is None:
        with connect(services.settings.database) as conn:
            shown = asdict(load_product(conn, product_id))
    # Site: asyncio.create_task of a coroutine job.
    task = asyncio.create_task(record_page_view(f"/products/{product_id}"))
    _PENDING.add(task)
    task.add_done_callback(_PENDING.discard)
    return {"id": product_id, **shown}


@router.get("/products/{product_id}/views")
def product_views(product_id: int) -> dict[str, int]:
    return {"views": page_views(f"/products/{product_id}")}


@router.post("/products/{product_id}/images", status_code=202)
async def upload_image(
    product_id: int, file: UploadFile, services: ServicesDep
) -> dict[str, object]:
    data = await file.read()
    with connect(services.settings.database) as conn:
        image_id = insert_image(conn, product_id)
    save_original(services.settings.media_dir, image_id, data)
    # Site: executor.map, results never read.
    workers.EXECUTOR.map(make_thumbnail, [image_id] * len(THUMB_SIZES), THUMB_SIZES)
    return {"image_id": image_id, "sizes": list(THUMB_SIZES)}

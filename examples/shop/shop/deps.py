"""FastAPI dependencies: what a request handler gets from the running app."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request

from shop.fulfilment import PickingBoard
from shop.services import Services


def get_services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


def get_board(request: Request) -> PickingBoard:
    return get_services(request).board


ServicesDep = Annotated[Services, Depends(get_services)]
BoardDep = Annotated[PickingBoard, Depends(get_board)]
Day = Annotated[str, Path(pattern=r"^\d{4}-\d{2}-\d{2}$", description="Business day, YYYY-MM-DD.")]

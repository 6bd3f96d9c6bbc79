"""What the back office sees: the event feed and the picking board."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter

from shop.deps import BoardDep, ServicesDep

router = APIRouter(prefix="/admin")


@router.get("/events")
def events(services: ServicesDep) -> list[str]:
    return services.events.seen()


@router.get("/picking")
def picking(board: BoardDep) -> list[dict[str, int]]:
    return [asdict(card) for card in board.cards()]

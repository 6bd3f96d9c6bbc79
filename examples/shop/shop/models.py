"""Rows of the shop's tables, and the request bodies of its API."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field


class NotFound(LookupError):
    """No such row."""


@dataclass(frozen=True, slots=True)
class User:
    id: int
    email: str
    name: str


@dataclass(slots=True)
class Product:
    id: int
    name: str
    price_cents: int
    stock: int


@dataclass(frozen=True, slots=True)
class Order:
    id: int
    user_id: int
    product_id: int
    qty: int
    amount_cents: int
    status: str
    day: str
    capture_id: str | None
    refunded_cents: int


class SignupIn(BaseModel):
    email: str = Field(pattern=r"^[^@\s]+@[^@\s]+$")
    name: str = Field(min_length=1)


class ProductIn(BaseModel):
    name: str = Field(min_length=1)
    price_cents: int = Field(ge=0)
    stock: int = Field(ge=0)


class OrderIn(BaseModel):
    user_id: int
    product_id: int
    qty: int = Field(ge=1)
    day: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="Business day, YYYY-MM-DD.")


class RefundIn(BaseModel):
    amount_cents: int = Field(gt=0)

"""The queries request handlers and jobs share."""

from __future__ import annotations

import sqlite3

from shop.models import NotFound, Order, Product, User


def _one(conn: sqlite3.Connection, what: str, sql: str, row_id: int) -> sqlite3.Row:
    row = conn.execute(sql, (row_id,)).fetchone()
    if row is None:
        raise NotFound(f"{what} {row_id} does not exist")
    return row


def insert_user(conn: sqlite3.Connection, email: str, name: str) -> User:
    cur = conn.execute("INSERT INTO users (email, name) VALUES (?, ?)", (email, name))
    return User(id=int(cur.lastrowid or 0), email=email, name=name)


def load_user(conn: sqlite3.Connection, user_id: int) -> User:
    return User(**dict(_one(conn, "user", "SELECT * FROM users WHERE id = ?", user_id)))


def insert_product(conn: sqlite3.Connection, name: str, price_cents: int, stock: int) -> Product:
    cur = conn.execute(
        "INSERT INTO products (name, price_cents, stock) VALUES (?, ?, ?)",
        (name, price_cents, stock),
    )
    return Product(id=int(cur.lastrowid or 0), name=name, price_cents=price_cents, stock=stock)


def load_product(conn: sqlite3.Connection, product_id: int) -> Product:
    return Product(**dict(_one(conn, "product", "SELECT * FROM products WHERE id = ?", product_id)))


def save_product(conn: sqlite3.Connection, product: Product) -> None:
    conn.execute(
        "UPDATE products SET name = ?, price_cents = ?, stock = ? WHERE id = ?",
        (product.name, product.price_cents, product.stock, product.id),
    )


def insert_image(conn: sqlite3.Connection, product_id: int) -> int:
    load_product(conn, product_id)
    cur = conn.execute("INSERT INTO images (product_id) VALUES (?)", (product_id,))
    return int(cur.lastrowid or 0)


def insert_order(
    conn: sqlite3.Connection, user_id: int, product: Product, qty: int, amount_cents: int, day: str
) -> Order:
    cur = conn.execute(
        "INSERT INTO orders (user_id, product_id, qty, amount_cents, status, day)"
        " VALUES (?, ?, ?, ?, 'new', ?)",
        (user_id, product.id, qty, amount_cents, day),
    )
    return load_order(conn, int(cur.lastrowid or 0))


def load_order(conn: sqlite3.Connection, order_id: int) -> Order:
    return Order(**dict(_one(conn, "order", "SELECT * FROM orders WHERE id = ?", order_id)))


def orders_of_day(conn: sqlite3.Connection, day: str) -> list[Order]:
    rows = conn.execute("SELECT * FROM orders WHERE day = ? ORDER BY id", (day,)).fetchall()
    return [Order(**dict(row)) for row in rows]


def order_days(conn: sqlite3.Connection) -> list[str]:
    return [row[0] for row in conn.execute("SELECT DISTINCT day FROM orders ORDER BY day")]

"""The shop's configuration, built once by the app's lifespan (never at import)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Settings:
    database: Path
    media_dir: Path
    reports_dir: Path
    smtp_host: str = "localhost"
    smtp_port: int = 25
    mail_from: str = "shop@example.com"
    gateway_url: str = "https://payments.example.com"
    gateway_key: str = ""

    @classmethod
    def in_directory(cls, root: Path, **overrides: object) -> Settings:
        """Everything the shop writes lives under ``root`` (tests use a temp dir)."""
        return cls(
            database=root / "data" / "shop.sqlite3",
            media_dir=root / "media",
            reports_dir=root / "data" / "reports",
            **overrides,  # type: ignore[arg-type]
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        root = Path(environ.get("SHOP_HOME", "."))
        return cls.in_directory(
            root,
            smtp_host=environ.get("SHOP_SMTP_HOST", "localhost"),
            smtp_port=int(environ.get("SHOP_SMTP_PORT", "25")),
            mail_from=environ.get("SHOP_MAIL_FROM", "shop@example.com"),
            gateway_url=environ.get("SHOP_GATEWAY_URL", "https://payments.example.com"),
            gateway_key=environ.get("SHOP_GATEWAY_KEY", ""),
        )

"""The Inventory JSON (``schema_version`` versioned): the contract later commands read."""

from __future__ import annotations

import json

from migrator.render.scan.view import ReportView


def render_json(view: ReportView) -> str:
    return json.dumps(view.inventory.model_dump(mode="json"), indent=2) + "\n"

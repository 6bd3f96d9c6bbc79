"""codemods."""

"""migrator."""

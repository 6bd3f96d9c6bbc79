"""CLI commands kept in their own modules; ``migrator/cli.py`` registers them."""

"""A tiny app for the ``migrator loadtest`` e2e tests: one non-idempotent job and its sandbox."""

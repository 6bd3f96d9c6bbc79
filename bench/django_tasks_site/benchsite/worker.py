"""What ``queue-runtime worker benchsite.worker`` imports: nothing (tasks load by module path)."""

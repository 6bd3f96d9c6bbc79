"""Change sets, on top of the rewrites: file changes, review branches, PR texts, the git they need."""

"""The walk over one module: the pre-pass over statements, then the mixins that visit bodies."""

"""Detectors: which calls start work in-process (sites), which functions are request handlers."""

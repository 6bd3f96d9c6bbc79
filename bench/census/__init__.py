"""The label-free census: scan pinned real web packages and measure what the scan misses.

Run ``python -m bench.census DEST`` (see ``bench/census/README.md``).
"""

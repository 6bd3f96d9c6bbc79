"""The scan's pipeline: find the files, summarise them (cached, in parallel), classify, write.

``_walk`` finds the files, ``_files`` and ``_pool`` summarise them, ``_cache``
(the index) and ``_store`` (the summaries) keep them between runs, ``_memo``
keeps the last Inventory, and ``_scan`` ties it together.
"""

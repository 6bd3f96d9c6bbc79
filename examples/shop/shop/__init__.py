"""shop: a small FastAPI shop, the example app of job-migrator.

It does its slow and risky work the way many real apps do: in threads,
executors, asyncio tasks, BackgroundTasks, a child process, a scheduler and inline in
request handlers. README.md lists every such call site and the verdict the
scanner should give its job.
"""

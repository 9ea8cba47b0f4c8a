"""Qt-free, module-level job functions (picklable, so a worker process can run them), one module per purpose:
design, schema, release, analyse, clusters, compare. Each is called as ``fn(*args, progress=..., cancel=...)``."""

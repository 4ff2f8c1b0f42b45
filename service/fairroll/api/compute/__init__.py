"""CPU-heavy requests (odds, verification) answered off the event loop by worker
processes: the pool and its middleware (``pool``), the frames (``wire``), the worker
program (``worker``)."""

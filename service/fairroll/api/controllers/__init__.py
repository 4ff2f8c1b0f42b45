"""One controller per rule system (``systems``), and one file per resource of a table:
``tables`` (a new table), ``entries``, ``seeds``, ``checkpoints``, ``cosignatures``,
``log_tiles``, ``verify``; then ``keys``, ``page`` and ``ops``."""

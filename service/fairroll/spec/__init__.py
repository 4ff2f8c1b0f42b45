"""Writing the OpenAPI document: the schema Litestar derives, finished so generators and
linters read it cleanly (``openapi``), and the examples captured from a live server
(``examples``, ``examples.json``)."""

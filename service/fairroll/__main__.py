"""``python -m fairroll`` is the ``fairroll`` command."""

from fairroll.cli import main

raise SystemExit(main())

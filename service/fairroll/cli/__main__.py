"""``python -m fairroll.cli`` is the ``fairroll`` command."""

from fairroll.cli import main

raise SystemExit(main())

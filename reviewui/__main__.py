"""`python -m reviewui` runs the CLI."""

from reviewui.cli import main

raise SystemExit(main())

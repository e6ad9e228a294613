"""`python -m groundwiki` is the `groundwiki` command."""

from .cli import main

raise SystemExit(main())

"""`python -m groundwiki` is the `groundwiki` command."""

from groundwiki.cli import main

raise SystemExit(main())

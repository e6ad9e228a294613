"""Lint: every problem in a wiki as a finding with a stable rule name, a location and a fix.
Imports the core up to wiki/."""

from groundwiki.core.lint.findings import Finding, LintReport
from groundwiki.core.lint.runner import run_lint

__all__ = ["Finding", "LintReport", "run_lint"]

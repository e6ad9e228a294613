"""Lint: every problem in a wiki as a finding with a stable rule name, a location and a fix."""

from .findings import Finding, LintReport
from .runner import run_lint

__all__ = ["Finding", "LintReport", "run_lint"]

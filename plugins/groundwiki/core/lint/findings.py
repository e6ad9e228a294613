"""Findings and the report that groups them."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import Any

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    path: str
    line: int
    column: int
    message: str
    hint: str
    detail: str = ""  # what identifies the finding when lines move (for the baseline)
    # Set when `message` or `detail` names what only one user may read (their page, their lock
    # key): (message, detail) as readers of the shared scope, such as the site's, are told it.
    shared: tuple[str, str] | None = field(default=None, compare=False, repr=False)

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.column, self.rule, self.message)

    def fingerprint(self) -> tuple[str, str, str]:
        return (self.rule, self.path, self.detail or self.message)

    def for_shared_scope(self) -> Finding:
        """The finding as a reader of the shared scope may read it."""
        if self.shared is None:
            return self
        message, detail = self.shared
        return replace(self, message=message, detail=detail, shared=None)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["shared"]  # used by `shared_report` only; not part of lint.json's shape
        return data


@dataclass(frozen=True)
class LintReport:
    findings: tuple[Finding, ...]  # active: neither switched off nor in the baseline
    baselined: int

    @property
    def counts(self) -> dict[str, int]:
        counted = Counter(f.severity for f in self.findings)
        return {severity: counted.get(severity, 0) for severity in SEVERITY_ORDER}

    def failed(self, strict: bool) -> bool:
        counts = self.counts
        return counts["error"] > 0 or (strict and counts["warning"] > 0)

    def shown(self, min_severity: str = "info") -> tuple[Finding, ...]:
        """The findings of `min_severity` or above (`"warning"`: errors and warnings)."""
        rank = SEVERITY_ORDER[min_severity]
        return tuple(f for f in self.findings if SEVERITY_ORDER[f.severity] <= rank)

    def not_shown(self, min_severity: str = "info") -> dict[str, int]:
        """How many findings of each severity below `min_severity` `shown` leaves out."""
        rank = SEVERITY_ORDER[min_severity]
        return {s: n for s, n in self.counts.items() if SEVERITY_ORDER[s] > rank}

    def to_json(self, min_severity: str = "info") -> dict[str, Any]:
        """`counts` counts every finding; `findings` lists those `shown`. Above "info",
        `min_severity` and `not_shown` (by severity) say what the list leaves out."""
        data: dict[str, Any] = {
            "version": 1,
            "counts": {**self.counts, "baselined": self.baselined},
            "findings": [f.to_json() for f in self.shown(min_severity)],
        }
        if min_severity != "info":
            data["min_severity"] = min_severity
            data["not_shown"] = self.not_shown(min_severity)
        return data

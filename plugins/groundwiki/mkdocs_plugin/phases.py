"""Where a build's time goes, measured from the plugin's events.

MkDocs calls the plugin at the edges of each of its phases, so the time between two events is
the time of the work MkDocs did between them. Per page, the work between the plugin's earliest
and latest `on_page_context` handlers is the search plugin's indexing, and the time from the
latest `on_post_page` handler to the next page's first event is writing the file.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

log = logging.getLogger("mkdocs.plugins.groundwiki")
PHASES_FILE = "build-phases.json"


class BuildClock:
    """Seconds per phase of one build. `start(phase)` ends the phase running (if any)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self._phase: str | None = None
        self._since = time.perf_counter()
        self.began = self._since

    def start(self, phase: str | None) -> None:
        now = time.perf_counter()
        if self._phase is not None:
            self.seconds[self._phase] = self.seconds.get(self._phase, 0.0) + now - self._since
        self._phase = phase
        self._since = now

    def add(self, phase: str, seconds: float, count: int = 1) -> None:
        """Time measured elsewhere (a worker, a nested call), not part of the running phase."""
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds
        self.counts[phase] = self.counts.get(phase, 0) + count

    def take(self, phase: str, seconds: float) -> None:
        """Move `seconds` out of the running phase into `phase` (work nested inside it)."""
        if self._phase is not None:
            self.seconds[self._phase] = self.seconds.get(self._phase, 0.0) - seconds
        self.add(phase, seconds)

    def phases(self) -> dict[str, float]:
        self.start(None)
        return {name: round(value, 3) for name, value in self.seconds.items()}

    def write(self, folder: Path) -> dict[str, object]:
        """The report, logged (visible with `mkdocs build -v`) and kept in `folder` so a
        benchmark or a curious writer can read it; it only informs, so a failure is ignored."""
        phases = self.phases()
        total = round(time.perf_counter() - self.began, 3)
        report = {"total_s": total, "phases_s": phases, "counts": dict(self.counts)}
        shown = ", ".join(f"{name} {value:.2f} s" for name, value in phases.items())
        log.debug(f"groundwiki: build phases: {shown}")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            temporary = folder / f".{PHASES_FILE}.{os.getpid()}"
            temporary.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
            os.replace(temporary, folder / PHASES_FILE)
        except OSError:
            pass
        return report

"""What every benchmark script shares: timing repeats and the facts of the machine it ran on."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
RESULTS = Path(__file__).resolve().parent / "results"


def repeat(
    fn: Callable[[], T], repeats: int, long_run: float = float("inf")
) -> tuple[list[float], T]:
    """Times of up to `repeats` runs; one run longer than `long_run` s is enough on its own,
    since its noise is small against its length and more runs would blow the time budget."""
    times: list[float] = []
    result: T
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        if times[-1] > long_run:
            break
    return times, result


def machine_facts() -> dict[str, Any]:
    try:
        revision = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        revision = ""
    return {
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git": revision or None,
    }


def add_scale_options(
    parser: argparse.ArgumentParser, *, repeats: int, long_run: float, unit: str
) -> None:
    """The options every scaling benchmark shares: sizes, repeats, the long-run cutoff, the seed."""
    parser.add_argument("--sizes", default="500,2000,10000", help="page counts, comma-separated")
    parser.add_argument(
        "--repeats", type=int, default=repeats, help=f"{unit}s per measurement (median)"
    )
    parser.add_argument(
        "--long-run",
        type=float,
        default=long_run,
        help=f"a {unit} longer than this many seconds is not repeated",
    )
    parser.add_argument("--seed", type=int, default=42)


def p95(values: list[float]) -> float:
    """The 95th percentile by nearest rank (the largest value for fewer than 20)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]


def write_results(path: Path, data: dict[str, Any]) -> None:
    """Write a benchmark's figures as indented JSON (the handbook cites them by line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")


def free_port() -> int:
    """A port nothing listens on now, for a sidecar a benchmark starts."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_sidecar(server: subprocess.Popen[Any]) -> int | None:
    """Stop a sidecar started by a benchmark as Ctrl-C would, and kill it if it hangs."""
    if server.poll() is None:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return server.returncode

"""The handbook cites copies of the command's help and listings (raw-sources/cli/): each copy
must be what the command prints today, or the reference documents a command that is gone.

Regenerate them all with `.venv/bin/python tests/cli/test_help_copies.py`, then fix the line ranges
that lint reports as moved (`groundwiki lock --fix-moved`) and re-read those it reports as drifted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GROUNDWIKI = str(Path(sys.executable).parent / "groundwiki")
CLI = Path(__file__).resolve().parents[2] / "raw-sources/cli"

# Each copy: the commands whose output it holds. `$`-headed copies show each command's line
# before its output, as a terminal does; the others are one output as printed.
COPIES: dict[str, tuple[tuple[str, ...], ...]] = {
    "groundwiki-help.txt": (
        ("--help",),
        ("lint", "--help"),
        ("lock", "--help"),
        ("graph", "--help"),
        ("rules", "--help"),
    ),
    "groundwiki-cite-help.txt": (("cite", "--help"),),
    "groundwiki-new-help.txt": (("new", "--help"),),
    "groundwiki-rename-help.txt": (("rename", "--help"),),
    "groundwiki-settings.txt": (("settings",),),
    "groundwiki-rules.txt": (("rules",),),
}
PLAIN = {"groundwiki-settings.txt", "groundwiki-rules.txt"}


def output(args: tuple[str, ...]) -> str:
    # A fixed width, so argparse wraps the same way in every terminal and in CI.
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run(
        [GROUNDWIKI, *args], capture_output=True, text=True, timeout=60, env=env, check=True
    )
    return done.stdout


def expected(name: str) -> str:
    runs = COPIES[name]
    if name in PLAIN:
        return output(runs[0])
    return "\n".join(f"$ groundwiki {' '.join(args)}\n{output(args)}" for args in runs)


@pytest.mark.parametrize("name", sorted(COPIES))
def test_the_handbooks_copy_is_what_the_command_prints(name):
    assert (CLI / name).read_text() == expected(name), (
        f"raw-sources/cli/{name} is out of date: run .venv/bin/python tests/cli/test_help_copies.py"
    )


if __name__ == "__main__":
    for copy in sorted(COPIES):
        (CLI / copy).write_text(expected(copy))
        print(f"wrote raw-sources/cli/{copy}")

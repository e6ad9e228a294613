"""The handbook cites copies of the command's help and listings (raw-sources/cli/): each copy
must be what the command prints today, or the reference documents a command that is gone.

Regenerate them all with `.venv/bin/python tests/cli/test_help_copies.py`, then fix the line ranges
that lint reports as moved (`groundwiki lock --fix-moved`) and re-read those it reports as drifted.

The README and the handbook show the command too, in code blocks: a line that starts with
`groundwiki` there is a synopsis when it has `[options]`, and must then be the usage line that
`groundwiki <command> --help` prints (the options every command takes, `-h`, `-q` and
`-f CONFIG_FILE`, may be left out); otherwise it is an example, whose command must exist and
whose options must be among the ones that usage line names.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

GROUNDWIKI = str(Path(sys.executable).parent / "groundwiki")
ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "raw-sources/cli"

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
    "groundwiki-lsp-help.txt": (("lsp", "--help"),),
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


# The synopses and examples in the README and the handbook.

DOCS = (ROOT / "README.md", *sorted((ROOT / "wiki").rglob("*.md")))
# The options every command takes: a synopsis may leave them out.
COMMON = ("[-h]", "[-q]", "[-f CONFIG_FILE]")
GLOBAL_FLAGS = ("-q", "--quiet")
GLOBAL_VALUES = ("-f", "--config-file")
SUBCOMMANDS = re.compile(r"\{([\w,-]+)\} \.\.\.")
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")

# Run in one process: the console script's own entry point with `--help`, for the command and
# each subcommand it names, down to the leaves. One interpreter start instead of one per command.
USAGES = textwrap.dedent(
    """
    import contextlib, io, json, re, sys
    from importlib.metadata import entry_points

    (main,) = [e.load() for e in entry_points(group="console_scripts", name="groundwiki")]

    def usage(path):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                main([*path, "--help"])
            except SystemExit:
                pass
        return out.getvalue().split("\\n\\n")[0]

    usages, todo = {}, [()]
    while todo:
        path = todo.pop()
        usages[" ".join(path)] = text = usage(path)
        found = re.search(sys.argv[1], " ".join(text.split()))
        todo += [(*path, name) for name in (found.group(1).split(",") if found else ())]
    print(json.dumps(usages))
    """
)


def normalised(synopsis: str) -> str:
    """A synopsis on one line, without `usage:` and without the options every command takes."""
    words = " ".join(synopsis.removeprefix("usage:").split())
    for common in COMMON:
        words = words.replace(f" {common}", "")
    return words


@functools.cache
def usages() -> dict[str, str]:
    """Each command path (`""`, `"lint"`, `"token new"`) to its usage line, normalised."""
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", USAGES, SUBCOMMANDS.pattern],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    return {path: normalised(usage) for path, usage in json.loads(done.stdout).items()}


def command_lines(text: str) -> list[tuple[int, str]]:
    """Each `groundwiki ...` line of the text's fenced code blocks, with its line number: a
    `$ ` prompt and a trailing `# comment` dropped, indented continuation lines joined."""
    found: list[tuple[int, str]] = []
    fence = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fence = "" if fence and stripped.startswith(fence) else fence or stripped[:3]
            continue
        if not fence:
            continue
        command = re.split(r"\s#\s", stripped.removeprefix("$ "), maxsplit=1)[0].strip()
        if command == "groundwiki" or command.startswith("groundwiki "):
            found.append((number, command))
        elif found and found[-1][0] == number - 1 and line[:1].isspace() and command:
            # argparse wraps a long usage line under its start; it is still one line
            found[-1] = (number, f"{found[-1][1]} {command}")
    return found


def command_path(words: list[str], known: dict[str, str]) -> tuple[str, list[str]]:
    """The longest command path the words start with, and the words after it."""
    path: list[str] = []
    while words and " ".join([*path, words[0]]) in known:
        path.append(words.pop(0))
    return " ".join(path), words


def problems(text: str, where: str) -> list[str]:
    """Every synopsis in the text that is not its command's usage line, and every example that
    names a command or an option the command does not have."""
    known = usages()
    found = []
    for number, line in command_lines(text):
        at = f"{where}:{number}"
        if "[" in line:  # a synopsis
            path, _ = command_path(normalised(line).split()[1:], known)
            if normalised(line) != known[path]:
                found.append(f"{at}: {line!r} is not the usage line {known[path]!r}")
            continue
        words = shlex.split(line)[1:]
        while words and (words[0] in GLOBAL_FLAGS or words[0].split("=")[0] in GLOBAL_VALUES):
            words = words[1 if words[0] in GLOBAL_FLAGS or "=" in words[0] else 2 :]
        path, rest = command_path(words, known)
        usage = known[path]
        if not path or SUBCOMMANDS.search(usage):
            found.append(f"{at}: {line!r} names no command: the usage is {usage!r}")
            continue
        allowed = set(OPTION.findall(usage)) | {"-h", "--help", *GLOBAL_FLAGS, *GLOBAL_VALUES}
        for word in rest:
            option = word.split("=")[0]
            if OPTION.fullmatch(option) and option not in allowed:
                found.append(f"{at}: {line!r}: {option} is no option of {usage!r}")
    return found


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.relative_to(ROOT).as_posix())
def test_each_synopsis_is_the_usage_line_and_each_example_a_valid_command(doc):
    assert problems(doc.read_text(encoding="utf-8"), doc.relative_to(ROOT).as_posix()) == []


def test_the_check_catches_a_stale_synopsis_and_a_stale_example():
    synopsis = "groundwiki lint [--format {text,json,github}] [--strict] [--min-severity {info,warning,error}] [--no-baseline] [--write-baseline]"
    fine = f"```sh\n{synopsis}\n```\n"
    assert problems(fine, "doc") == []
    # an option the command does not have, or one it has that the synopsis leaves out
    assert problems(fine.replace(" [--strict]", " [--strict] [--fast]"), "doc")
    assert problems(fine.replace(" [--strict]", ""), "doc")
    # argparse's wrapping is no difference; a prompt and a comment are not part of the line
    wrapped = fine.replace(" [--no-baseline]", "\n     [--no-baseline]")
    shown = wrapped.replace("groundwiki", "$ groundwiki").replace("baseline]\n", "baseline]  # x\n")
    assert problems(shown, "doc") == []
    # outside a code block, a line is prose
    assert problems(synopsis.replace(" [--strict]", ""), "doc") == []

    examples = (
        "```sh\ngroundwiki -f x/mkdocs.yml lint --strict  # in CI\ngroundwiki -q rules\n```\n"
    )
    assert problems(examples, "doc") == []
    # an option that is gone, a command that is gone, a command group without its command
    assert problems(examples.replace("--strict", "--stricter"), "doc")
    assert problems(examples.replace("rules", "rulez"), "doc")
    assert problems("```\ngroundwiki token alice\n```\n", "doc")


if __name__ == "__main__":
    for copy in sorted(COPIES):
        (CLI / copy).write_text(expected(copy))
        print(f"wrote raw-sources/cli/{copy}")

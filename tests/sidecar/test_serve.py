"""`mkdocs serve` as a writer runs it: an edit of a raw source (outside docs_dir) rebuilds."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml
from helpers.wikis import page, write_wiki

MKDOCS = str(Path(sys.executable).parent / "mkdocs")


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode("utf-8")
    except OSError:
        return ""


def wait_for(url: str, text: str, seconds: float = 90) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in fetch(url):
            return True
        time.sleep(0.5)
    return False


def test_edits_of_raw_sources_and_of_the_lock_rebuild_the_site(tmp_path):
    config = write_wiki(
        tmp_path,
        {
            "index.md": page(
                kind="overview", body="# Home\n\nA claim. <!-- from: raw-sources/n.md -->\n"
            )
        },
        {"n.md": "Original evidence.\n"},
    )
    data = yaml.safe_load(config.read_text())
    data["theme"] = {"name": "material"}
    config.write_text(yaml.safe_dump(data))
    lock = [str(Path(sys.executable).parent / "groundwiki"), "-q", "-f", str(config), "lock"]
    subprocess.run(lock, check=True, capture_output=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [MKDOCS, "serve", "-f", str(config), "--dev-addr", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    home = f"http://127.0.0.1:{port}/"
    source = f"{home}raw-sources/n.md/"
    try:
        assert wait_for(source, "Original evidence."), "the site never came up"
        assert "gw-banner" not in fetch(home)
        # raw-sources/ is outside docs_dir: only the plugin's watch makes this rebuild.
        (tmp_path / "raw-sources/n.md").write_text("Rewritten evidence.\n")
        assert wait_for(source, "Rewritten evidence."), "the raw-source edit was not rebuilt"
        assert wait_for(home, "gw-banner"), "the citing page shows no drift banner"
        # Locking again accepts the new text: the lock is watched too, and the banner goes.
        subprocess.run(lock, check=True, capture_output=True)
        deadline = time.monotonic() + 90
        while "gw-banner" in fetch(home) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "gw-banner" not in fetch(home), "the lock edit was not rebuilt"
    finally:
        server.terminate()
        server.wait(timeout=20)

"""Token revocation: a running sidecar follows its tokens file. A line removed (by hand or with
`groundwiki token revoke`) refuses that token from the next request, without a restart; a file
that stops parsing keeps the tokens in force and says so in `/status`, and no edit ever opens
the sidecar. A real `groundwiki serve` of the scoped example wiki, with a tokens file on disk."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest
from groundwiki_sidecar.api.identity import TokenSource, parse_tokens, token_hash
from helpers.scoped import scoped_copy
from test_identity import groundwiki, set_sidecar, start, stop
from test_sidecar_process import get

USERS = ("alice", "bob", "carol", "dave")


def make_token(root: Path, user: str) -> str:
    made = groundwiki(root, "token", "new", user)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip().splitlines()[-1]


def status_of(base: str, token: str | None) -> int:
    return get(f"{base}/status", token)[0]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("revocation")
    scoped_copy(root)
    set_sidecar(root, tokens="tokens.yml")
    tokens = {user: make_token(root, user) for user in USERS}
    process, base = start(root)
    yield root, base, tokens
    log = stop(process)
    for token in tokens.values():  # neither a token nor its hash is ever logged
        assert token not in log


@pytest.fixture
def tokens_file(served):
    """The tokens file, put back as it was after the test."""
    path = served[0] / "tokens.yml"
    before = path.read_text()
    yield path
    path.write_text(before)


def test_a_line_deleted_by_hand_refuses_that_token_on_the_next_request(served, tokens_file):
    _, base, tokens = served
    assert status_of(base, tokens["bob"]) == 200
    kept = [line for line in tokens_file.read_text().splitlines() if not line.startswith("bob:")]
    tokens_file.write_text("\n".join(kept) + "\n")  # in place, as an editor saves it
    assert status_of(base, tokens["bob"]) == 401
    assert status_of(base, tokens["alice"]) == 200


def test_token_revoke_refuses_that_token_on_the_next_request(served, tokens_file):
    root, base, tokens = served
    assert status_of(base, tokens["carol"]) == 200
    revoked = groundwiki(root, "token", "revoke", "carol")
    assert revoked.returncode == 0, revoked.stderr
    assert "carol" in revoked.stderr and "next request" in revoked.stderr
    assert status_of(base, tokens["carol"]) == 401
    assert status_of(base, tokens["alice"]) == 200
    assert stat.S_IMODE(tokens_file.stat().st_mode) == 0o600  # still private
    assert "carol:" not in tokens_file.read_text()


def test_revoking_a_user_without_a_token_says_so(served):
    root, _, _ = served
    done = groundwiki(root, "token", "revoke", "nobody")
    assert done.returncode == 2 and "no token for nobody" in done.stderr


def test_a_token_made_while_serving_answers_without_a_restart(served, tokens_file):
    root, base, _ = served
    made = groundwiki(root, "token", "new", "erin")
    assert made.returncode == 0 and "next request" in made.stderr
    erin = made.stdout.strip().splitlines()[-1]
    assert get(f"{base}/status", erin)[1]["scope"] == "user:erin"


def test_a_file_that_stops_parsing_keeps_the_tokens_in_force_and_says_so(served, tokens_file):
    _, base, tokens = served
    good = tokens_file.read_text()
    tokens_file.write_text(good + "frank: hunter2\n")
    assert status_of(base, tokens["dave"]) == 200  # half an edit locks nobody out
    assert status_of(base, "hunter2") == 401 and status_of(base, None) == 401
    found = get(f"{base}/status", tokens["dave"])[1]["tokens"]
    line = len(good.splitlines()) + 1
    assert found["state"] == "failing" and f"tokens.yml:{line}" in found["error"]
    assert "hunter2" not in found["error"] and "frank" not in found["error"]
    tokens_file.write_text(good)
    assert get(f"{base}/status", tokens["dave"])[1]["tokens"] == {"state": "ok", "error": ""}


def test_an_emptied_or_missing_file_lets_nobody_in(served, tokens_file):
    _, base, tokens = served
    good = tokens_file.read_text()
    tokens_file.write_text("")
    assert status_of(base, None) == 401 and status_of(base, tokens["alice"]) == 401
    tokens_file.unlink()
    assert status_of(base, None) == 401 and status_of(base, tokens["alice"]) == 401
    tokens_file.write_text(good)
    tokens_file.chmod(0o600)
    assert status_of(base, tokens["alice"]) == 200


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer  "])
def test_the_bearer_scheme_is_matched_without_regard_to_case(served, scheme):
    import urllib.request

    _, base, tokens = served
    request = urllib.request.Request(f"{base}/status")
    request.add_header("Authorization", f"{scheme} {tokens['alice']}")
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200


def test_token_new_after_a_last_line_without_newline_starts_a_new_line(tmp_path):
    scoped_copy(tmp_path)
    path = tmp_path / "tokens.yml"
    path.write_text("alice: sha256:" + "0" * 64)  # saved by an editor without a final newline
    path.chmod(0o600)
    made = groundwiki(tmp_path, "token", "new", "bob", "--file", str(path))
    assert made.returncode == 0, made.stderr
    assert set(parse_tokens(path.read_text(), str(path)).hashes) == {"alice", "bob"}


def test_token_new_warns_of_a_tokens_file_others_can_read(tmp_path):
    scoped_copy(tmp_path)
    path = tmp_path / "tokens.yml"
    path.write_text("")
    path.chmod(0o644)
    made = groundwiki(tmp_path, "token", "new", "bob", "--file", str(path))
    assert made.returncode == 0 and "chmod 600" in made.stderr and "0644" in made.stderr


def test_serving_warns_of_a_tokens_file_others_can_read(tmp_path, caplog):
    path = tmp_path / "tokens.yml"
    path.write_text(f"alice: {token_hash('a')}\n")
    path.chmod(0o640)
    with caplog.at_level(logging.WARNING, "groundwiki_sidecar"):
        TokenSource(str(path), tmp_path)
    assert "chmod 600" in caplog.text and "0640" in caplog.text


def test_a_file_that_stops_parsing_is_logged_once_not_on_every_request(tmp_path, caplog):
    path = tmp_path / "tokens.yml"
    path.write_text(f"alice: {token_hash('a')}\n")
    path.chmod(0o600)
    source = TokenSource(str(path), tmp_path)
    path.write_text(f"alice: {token_hash('a')}\nbob: hunter2\n")
    with caplog.at_level(logging.ERROR, "groundwiki_sidecar"):
        for _ in range(3):
            assert source.current().user_for(b"a") == "alice"
    assert len(caplog.records) == 1 and "tokens.yml:2" in caplog.text
    assert "hunter2" not in caplog.text

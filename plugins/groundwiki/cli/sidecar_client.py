"""The commands' HTTP client of a running sidecar: which sidecar a command means, and its JSON
answer, or one line saying what answered instead (`status`, `query` and `audit replay` ask it)."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from typing import Any

from groundwiki_sidecar.base import listening
from groundwiki_sidecar.base.settings import Sidecar, SidecarSettings


@dataclass(frozen=True)
class Target:
    """The sidecar a command means: the one at `--port`, else the one whose record is in the
    index folder (`serve --port N` may listen off `sidecar.port`), else `sidecar.port`."""

    url: str
    pid: int | None = None  # the recorded sidecar's process
    given: bool = False  # named by --port

    def nobody(self) -> str:
        """The status line when nothing listens at `url`."""
        if self.pid is not None:  # alive, and still indexing before it listens
            return f"starting (pid {self.pid}); it answers at {self.url} once its indexes are ready"
        return f"not running (nothing answers at {self.url})"


def base_url(settings: SidecarSettings) -> str:
    return listening.base_url(settings.host, settings.port)


def target_for(sidecar: Sidecar, port: int | None) -> Target:
    settings = sidecar.settings
    if port is not None:
        return Target(base_url(replace(settings, port=port)), given=True)
    found = listening.running(sidecar.index_dir)
    if found is not None:
        return Target(found.url, found.pid)
    return Target(base_url(settings))


@dataclass(frozen=True)
class Reply:
    """A sidecar's JSON answer, or one line on what answered instead; neither when nothing
    listens (connection refused)."""

    data: dict[str, Any] | None = None
    problem: str = ""
    refusal: str = ""  # the sidecar's error code when it refused (`unauthorized`, ...)


MAX_ANSWER_BYTES = 64 * 1024 * 1024  # a query answer is far smaller; this bounds a stray server


def ask(
    sidecar: Sidecar,
    target: Target,
    path: str,
    timeout: float,
    keys: tuple[str, ...],
    payload: dict[str, Any] | None = None,
) -> Reply:
    """GET `path` from the target, or POST `payload` as JSON to it; a reply counts as the
    sidecar's when it is JSON with `keys`."""
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(f"{target.url}{path}", data=data)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if sidecar.settings.token:
        request.add_header("Authorization", f"Bearer {sidecar.settings.token}")
    port = target.url.rpartition(":")[2]
    fix = (
        "pass the port the sidecar listens on (groundwiki serve logs it)"
        if target.given
        else f"if the sidecar listens on another port, pass --port N; otherwise stop what holds "
        f"port {port} or set sidecar.port in {sidecar.config.config_file or 'mkdocs.yml'}"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAX_ANSWER_BYTES)
            return _reply(target.url, response.status, response.headers, body, keys, fix)
    except urllib.error.HTTPError as exc:
        with exc:
            return _reply(target.url, exc.code, exc.headers, exc.read(MAX_ANSWER_BYTES), keys, fix)
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, ConnectionRefusedError):
            return Reply()
        if isinstance(exc.reason, TimeoutError):
            return Reply(problem=_silent(target.url, timeout, fix))
        return Reply(problem=f"cannot reach {target.url}: {exc.reason}; {fix}")
    except TimeoutError:  # connected and sent the request; the answer never came
        return Reply(problem=_silent(target.url, timeout, fix))
    except (http.client.HTTPException, OSError) as exc:
        return Reply(
            problem=f"{target.url} is not a groundwiki sidecar: it gave no HTTP answer "
            f"({type(exc).__name__}); {fix}"
        )


def _silent(url: str, timeout: float, fix: str) -> str:
    return (
        f"{url} took the connection but sent no answer in {timeout:g} s: a sidecar that is "
        f"this busy or hung needs its log checked; {fix}"
    )


def shown(text: str, limit: int) -> str:
    """Text from whatever answered, safe to print: no control characters, one short line."""
    return "".join(c if c.isprintable() else "?" for c in text[:limit])


def _reply(
    url: str, code: int, headers: Any, body: bytes, keys: tuple[str, ...], fix: str
) -> Reply:
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        if code == 200 and all(key in data for key in keys):
            return Reply(data)
        if isinstance(data.get("error"), str) and isinstance(data.get("message"), str):
            return Reply(
                problem=f"the sidecar at {url} refused: {shown(data['message'], 400)}",
                refusal=data["error"],
            )
    kind = shown((headers.get("Content-Type") or "no content type").split(";")[0].strip(), 60)
    server = f" from {shown(headers['Server'], 60)}" if headers.get("Server") else ""
    return Reply(
        problem=f"{url} is not a groundwiki sidecar: it answered HTTP {code} with {kind}"
        f"{server}; {fix}"
    )

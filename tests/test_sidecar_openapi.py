"""Property test: requests generated from the sidecar's own OpenAPI document, sent to a real
sidecar process, never get a 5xx and always get JSON."""

from __future__ import annotations

import signal

import pytest
import schemathesis
from groundwiki import __version__
from groundwiki.sidecar.schemas import openapi
from test_sidecar_api import _serve, _wiki

schema = schemathesis.openapi.from_dict(openapi(__version__))
schema.config.generation.update(max_examples=25)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    root = tmp_path_factory.mktemp("openapi")
    _wiki(root)
    process, base = _serve(root)
    yield base
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


@schema.parametrize()
def test_no_request_gets_a_server_error(case, live):
    response = case.call(base_url=live, timeout=30)
    assert response.status_code < 500, response.text
    assert response.headers["content-type"][0].startswith("application/json")
    if response.status_code >= 400:
        assert {"error", "message"} <= set(response.json())

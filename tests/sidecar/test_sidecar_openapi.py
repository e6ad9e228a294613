"""Property test: requests generated from the sidecar's own OpenAPI document, sent to a real
sidecar process, never get a 5xx, always get JSON, and get only the status codes and the
answer shapes the document declares (schemathesis' conformance checks): the published schema
stays honest."""

from __future__ import annotations

import signal

import pytest
import schemathesis
from groundwiki import __version__
from groundwiki_sidecar.api.openapi import COMPACT_MEDIA_TYPE, TOON_MEDIA_TYPE, openapi
from schemathesis import checks
from test_sidecar_api import _serve, _wiki

schema = schemathesis.openapi.from_dict(openapi(__version__))
schema.config.generation.update(max_examples=25)

CONFORMANCE = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    root = tmp_path_factory.mktemp("openapi")
    _wiki(root)
    process, base = _serve(root)
    yield base
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


@schema.parametrize()
def test_every_answer_conforms_to_the_document(case, live):
    response = case.call_and_validate(base_url=live, timeout=30, checks=CONFORMANCE)
    # An answer in the form `format` asked for (the document declares each); an error in JSON.
    media = response.headers["content-type"][0]
    if response.status_code >= 400:
        assert media.startswith("application/json")
        assert {"error", "message"} <= set(response.json())
    else:
        assert media.startswith(("application/json", COMPACT_MEDIA_TYPE, TOON_MEDIA_TYPE))

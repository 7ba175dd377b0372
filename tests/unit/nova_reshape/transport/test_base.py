"""The transport base: every verb is one call of request(), with its arguments as given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from nova_reshape.transport import JsonBody, Transport


class _Recording(Transport):
    """The base with only request() written: what the verbs pass it is recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[Any, ...]] = []

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> str:
        self.seen.append((method, url, json, microversion, headers))
        return "answer"


@pytest.mark.parametrize("verb", ["get", "put", "post", "delete"])
def test_each_verb_is_one_request_call(verb):
    transport = _Recording()
    answer = getattr(transport, verb)("/x", json={"a": 1}, microversion="1.6",
                                      headers={"h": "v"})
    assert answer == "answer"
    assert transport.seen == [(verb.upper(), "/x", {"a": 1}, "1.6", {"h": "v"})]


def test_verbs_default_to_no_body_version_or_headers():
    transport = _Recording()
    transport.get("/y")
    assert transport.seen == [("GET", "/y", None, None, None)]


def test_the_base_sends_nothing_itself():
    with pytest.raises(NotImplementedError):
        Transport().request("GET", "/")


def test_request_headers_fixed_then_version_then_callers():
    transport = Transport(headers={"x-auth-token": "t"}, default_microversion="1.2")
    assert transport.request_headers() == {
        "Accept": "application/json", "x-auth-token": "t",
        "OpenStack-API-Version": "placement 1.2"}
    assert transport.request_headers("1.6", {"x-auth-token": "u"}) == {
        "Accept": "application/json", "x-auth-token": "u",
        "OpenStack-API-Version": "placement 1.6"}

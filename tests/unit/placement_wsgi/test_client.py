"""ClientBase's headers and verbs; PlacementClient over a requests session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import requests

from placement_wsgi.client import (
    VERSION_HEADER,
    ClientBase,
    EnvironmentOnceSession,
    JsonBody,
    PlacementClient,
)


class Recorder(ClientBase[tuple]):
    """A client whose ``request`` returns its arguments (headers resolved)."""

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> tuple:
        return method, url, json, self.request_headers(microversion, headers)


def test_no_microversion_and_no_default_sends_no_version_header():
    assert Recorder().request_headers() == {"Accept": "application/json"}


def test_the_default_microversion_is_sent_unless_the_call_names_one():
    client = Recorder(headers={"X-Auth-Token": "t"}, default_microversion="1.20")
    assert client.request_headers() == {"Accept": "application/json", "X-Auth-Token": "t",
                                        VERSION_HEADER: "placement 1.20"}
    assert client.request_headers("1.39")[VERSION_HEADER] == "placement 1.39"


def test_the_callers_headers_win():
    client = Recorder(default_microversion="1.20")
    headers = client.request_headers(headers={VERSION_HEADER: "placement 1.0", "Accept": "x"})
    assert headers == {"Accept": "x", VERSION_HEADER: "placement 1.0"}


@pytest.mark.parametrize("verb", ["get", "put", "post", "delete"])
def test_each_verb_is_one_request_call(verb: str):
    method, url, json, headers = getattr(Recorder(), verb)(
        "/traits", {"a": 1}, microversion="1.6", headers={"X-A": "b"})
    assert (method, url, json) == (verb.upper(), "/traits", {"a": 1})
    assert headers[VERSION_HEADER] == "placement 1.6" and headers["X-A"] == "b"


def test_the_base_sends_nothing():
    with pytest.raises(NotImplementedError):
        ClientBase().get("/")


class FakeSession:
    """Records ``request`` calls as ``requests.Session`` receives them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.closed = False

    def request(self, method: str, url: str, **kwargs: Any) -> str:
        self.calls.append((method, url, kwargs))
        return "response"

    def close(self) -> None:
        self.closed = True


def test_placement_client_joins_the_base_url_and_passes_body_and_timeout():
    session = FakeSession()
    client = PlacementClient("http://placement/", session=session, timeout=5.0,
                             default_microversion="1.2")
    assert client.put("/traits/CUSTOM_A", {"x": 1}) == "response"
    method, url, kwargs = session.calls[0]
    assert (method, url) == ("PUT", "http://placement/traits/CUSTOM_A")
    assert kwargs == {"headers": {"Accept": "application/json",
                                  VERSION_HEADER: "placement 1.2"},
                      "json": {"x": 1}, "timeout": 5.0}


def test_placement_client_sends_no_body_or_timeout_unless_given():
    session = FakeSession()
    PlacementClient("http://placement", session=session).get("/")
    assert set(session.calls[0][2]) == {"headers"}
    PlacementClient("http://placement", session=session).close()
    assert session.closed


def test_environment_settings_are_those_of_requests_read_once_per_host(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "bypassed.invalid")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/bundle.pem")
    session = EnvironmentOnceSession()
    plain = requests.Session()
    for url in ("http://placement.invalid:8778/a", "http://bypassed.invalid/b"):
        assert (session.merge_environment_settings(url, {}, None, None, None)
                == plain.merge_environment_settings(url, {}, None, None, None))
    monkeypatch.setenv("HTTP_PROXY", "http://other.invalid:3128")
    monkeypatch.delenv("REQUESTS_CA_BUNDLE")
    # The same scheme and host: what was read on its first request.
    again = session.merge_environment_settings("http://placement.invalid:8778/c", {},
                                               None, None, None)
    assert again["proxies"]["http"] == "http://proxy.invalid:3128"
    assert again["verify"] == "/etc/bundle.pem"
    # A per-request setting, or another host, is looked up as requests does.
    asked = session.merge_environment_settings("http://placement.invalid:8778/c", {},
                                               None, False, None)
    assert asked["verify"] is False and asked["proxies"]["http"] == "http://other.invalid:3128"
    other = session.merge_environment_settings("http://new.invalid/", {}, None, None, None)
    assert other["proxies"]["http"] == "http://other.invalid:3128"


def test_a_client_reads_the_environment_once_unless_given_a_session():
    assert isinstance(PlacementClient("http://placement.invalid").session,
                      EnvironmentOnceSession)
    given = requests.Session()
    assert PlacementClient("http://placement.invalid", session=given).session is given

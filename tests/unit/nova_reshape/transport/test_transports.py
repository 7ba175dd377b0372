"""The transports' shared verbs: headers, microversions and bodies reach the endpoint."""

from __future__ import annotations

import json
from typing import Any

import pytest
import webob
import webob.dec

from nova_reshape.transport import CountingTransport, DirectTransport, open_direct
from nova_reshape.transport.direct import on_database
from placement_wsgi.objects.tree_change import TreeChange
from tests.fixtures.config import make_conf


@webob.dec.wsgify
def _echo(request: webob.Request) -> webob.Response:
    """A WSGI app answering with what it received."""
    seen = {"method": request.method, "path": request.path_qs,
            "headers": {key.lower(): value for key, value in request.headers.items()},
            "body": json.loads(request.body) if request.body else None}
    status = 404 if request.path == "/missing" else 200
    return webob.Response(json.dumps(seen).encode(), status=status,
                          content_type="application/json")


def test_direct_sends_fixed_headers_microversion_and_body():
    transport = DirectTransport(_echo, headers={"x-auth-token": "admin"})
    first = transport.get("/resource_providers?name=a")
    assert first.status_code == 200 and first.ok and bool(first)
    seen = first.json()
    assert seen["method"] == "GET" and seen["path"] == "/resource_providers?name=a"
    assert seen["headers"]["accept"] == "application/json"
    assert seen["headers"]["x-auth-token"] == "admin"
    assert "openstack-api-version" not in seen["headers"]  # Placement 1.0
    second = transport.put("/traits/CUSTOM_X", json={"a": 1}, microversion="1.6",
                           headers={"x-auth-token": "other"}).json()
    assert second["method"] == "PUT"
    assert second["headers"]["openstack-api-version"] == "placement 1.6"
    assert second["headers"]["x-auth-token"] == "other"  # per-request headers win
    assert second["body"] == {"a": 1}
    assert transport.post("/x", json=[]).json()["body"] == []
    assert transport.delete("/x").json()["method"] == "DELETE"


def test_direct_default_microversion_and_error_values():
    transport = DirectTransport(_echo, default_microversion="latest")
    response = transport.get("/missing")
    assert response.status_code == 404 and not response.ok and not response
    assert response.json()["headers"]["openstack-api-version"] == "placement latest"
    assert '"path": "/missing"' in response.text


class _VerbsOnly:
    """A transport with the four verbs only (as test doubles have)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, Any]]] = []

    def _record(self, method: str, url: str, **kwargs: Any) -> str:
        self.seen.append((method, url, kwargs))
        return f"{method} {url}"

    def get(self, url: str, **kwargs: Any) -> str:
        return self._record("get", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> str:
        return self._record("put", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> str:
        return self._record("post", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> str:
        return self._record("delete", url, **kwargs)


def test_counting_counts_and_passes_everything_through():
    inner = _VerbsOnly()
    counting = CountingTransport(inner)
    assert counting.get("/a") == "get /a"
    assert counting.put("/b", json={"x": 1}, microversion="1.30", headers={"h": "v"}) == "put /b"
    counting.post("/c", json=[1])
    counting.delete("/d")
    assert counting.calls == 4
    assert inner.seen[1] == ("put", "/b", {"json": {"x": 1}, "microversion": "1.30",
                                           "headers": {"h": "v"}})
    assert [method for method, _, _ in inner.seen] == ["get", "put", "post", "delete"]
    assert inner.seen[0][2] == {"json": None, "microversion": None, "headers": None}


class _TreeWriting(_VerbsOnly):
    """Verbs plus the one-call tree write of the in-process transport."""

    def apply_tree_change(self, change: Any, check: Any = None) -> dict[str, int]:
        self.seen.append(("apply_tree_change", "", {"change": change, "check": check}))
        return {"rp": 3}


def test_counting_counts_a_tree_change_as_one_call_and_one_write():
    inner = _TreeWriting()
    counting = CountingTransport(CountingTransport(inner))
    change = TreeChange()
    assert counting.apply_tree_change(change) == {"rp": 3}
    assert (counting.calls, counting.writes) == (1, 1)
    assert counting.placement.calls == 1  # each layer counts it once
    assert inner.seen == [("apply_tree_change", "", {"change": change, "check": None})]


def test_counting_refuses_a_tree_change_its_transport_cannot_write():
    counting = CountingTransport(_VerbsOnly())
    with pytest.raises(TypeError, match="cannot write a tree"):
        counting.apply_tree_change(TreeChange())
    assert (counting.calls, counting.writes) == (0, 0)


def test_on_database_is_a_direct_transport_with_its_database_seen_through_counting():
    app_only = DirectTransport(_echo)
    assert on_database(app_only) is None  # no PlacementDirect: requests only
    assert on_database(CountingTransport(_VerbsOnly())) is None
    with pytest.raises(RuntimeError, match="open_direct"):
        app_only.apply_tree_change(TreeChange())
    with open_direct(make_conf("sqlite://")) as direct:
        assert on_database(direct) is direct
        assert on_database(CountingTransport(CountingTransport(direct))) is direct

"""The transports' shared verbs: headers, microversions and bodies reach the endpoint."""

from __future__ import annotations

import json
from typing import Any

import webob
import webob.dec

from nova_reshape.transport import CountingTransport, DirectTransport


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

"""The in-process transport: requests handed to a WSGI app, open_direct, on_database."""

from __future__ import annotations

import json

import pytest
import webob
import webob.dec

from nova_reshape.transport import CountingTransport, DirectTransport, open_direct
from nova_reshape.transport.direct import on_database
from placement_wsgi.objects.tree_change import TreeChange
from tests.fixtures.config import make_conf
from tests.fixtures.transports import RequestOnly


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


def test_on_database_is_a_direct_transport_with_its_database_seen_through_counting():
    app_only = DirectTransport(_echo)
    assert on_database(app_only) is None  # no PlacementDirect: requests only
    assert on_database(CountingTransport(RequestOnly())) is None
    with pytest.raises(RuntimeError, match="open_direct"):
        app_only.apply_tree_change(TreeChange())
    with open_direct(make_conf("sqlite://")) as direct:
        assert on_database(direct) is direct
        assert on_database(CountingTransport(CountingTransport(direct))) is direct


def test_open_direct_closes_placement_direct_when_the_block_ends():
    with open_direct(make_conf("sqlite://")) as transport:
        assert transport.get("/").status_code == 200  # the version document
        direct = transport.direct
        assert direct is not None and direct.app is not None
    assert direct.app is None  # PlacementDirect left: app and database pool released


def test_open_direct_closes_placement_direct_after_an_error():
    with pytest.raises(RuntimeError, match="boom"), \
            open_direct(make_conf("sqlite://")) as transport:
        direct = transport.direct
        raise RuntimeError("boom")
    assert direct is not None and direct.app is None

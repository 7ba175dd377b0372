"""WSGIClient: requests handed straight to a WSGI app, as admin and service."""

from __future__ import annotations

from typing import Any

import webob
import webob.dec

from placement_wsgi.testing.client import ADMIN_HEADERS, WSGIClient


@webob.dec.wsgify
def echo(request: webob.Request) -> webob.Response:
    """An app answering with what it was sent."""
    body: Any = {"method": request.method, "path": request.path_qs,
                 "headers": dict(request.headers),
                 "body": request.json if request.body else None}
    return webob.Response(json_body=body, status=201)


def test_a_request_reaches_the_app_with_admin_roles_and_the_latest_microversion():
    response = WSGIClient(echo).get("/traits?name=in:A")
    assert isinstance(response, webob.Response) and response.status_code == 201
    sent = response.json
    assert (sent["method"], sent["path"], sent["body"]) == ("GET", "/traits?name=in:A", None)
    assert {key: sent["headers"][key] for key in ADMIN_HEADERS} == ADMIN_HEADERS
    assert sent["headers"]["Openstack-Api-Version"] == "placement latest"


def test_a_json_body_is_sent_as_json_and_headers_can_be_overridden():
    client = WSGIClient(echo, default_microversion="1.10", headers={"X-Roles": "reader"})
    sent = client.post("/resource_providers", {"name": "a"}, microversion="1.20").json
    assert sent["body"] == {"name": "a"}
    assert sent["headers"]["Content-Type"] == "application/json"
    assert sent["headers"]["X-Roles"] == "reader"
    assert sent["headers"]["Openstack-Api-Version"] == "placement 1.20"

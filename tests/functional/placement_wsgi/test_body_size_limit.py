"""The request body limit for bodies sent without Content-Length (chunked).

A body with a Content-Length is judged before it is read
(gabbits/body-size-limit.yaml); one sent chunked is read up to one byte past
the limit and refused with 413 once it passes it.
"""

from __future__ import annotations

import io
import json

import pytest
import webob

from placement_wsgi import deploy
from tests.fixtures.config import make_conf

LIMIT = 1024


@pytest.fixture
def app(db_url):
    application = deploy.loadapp(make_conf(
        db_url, oslo_middleware={"max_request_body_size": LIMIT}))
    yield application
    application.placement_app.database.dispose()


def _chunked_post(app, body: bytes) -> webob.Response:
    request = webob.Request.blank("/resource_providers", method="POST", headers={
        "x-auth-token": "admin", "accept": "application/json",
        "content-type": "application/json", "openstack-api-version": "placement 1.39"})
    request.environ["wsgi.input"] = io.BytesIO(body)
    request.environ.pop("CONTENT_LENGTH", None)
    request.environ["wsgi.input_terminated"] = True  # what a server sets for chunked input
    return request.get_response(app)


def test_a_chunked_body_over_the_limit_is_413(app) -> None:
    response = _chunked_post(app, json.dumps({"name": "x" * LIMIT}).encode())
    assert response.status_int == 413, response.body
    error = response.json["errors"][0]
    assert error["status"] == 413
    assert error["code"] == "placement.undefined_code"
    assert f"larger than {LIMIT} bytes" in error["detail"]
    listed = webob.Request.blank("/resource_providers", headers={
        "x-auth-token": "admin"}).get_response(app)
    assert listed.json["resource_providers"] == []


def test_a_chunked_body_under_the_limit_is_handled(app) -> None:
    body = json.dumps({"name": "chunked"}).encode()
    body += b" " * (LIMIT - len(body))  # exactly at the limit
    response = _chunked_post(app, body)
    assert response.status_int == 200, response.body
    assert response.json["name"] == "chunked"

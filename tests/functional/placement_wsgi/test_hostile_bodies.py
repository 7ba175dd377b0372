"""Bodies no route may choke on, on every engine: a 400 in the error format.

Regression tests for issue 15: a JSON body nested 100,000 levels deep was a
500 (RecursionError in the decoder) on every route that reads a body, and a
NUL in a body string was a 500 on PostgreSQL while SQLite and MariaDB stored
it. Each route is reached with real path values, so that the body is read.
"""

from __future__ import annotations

import json
import uuid

import pytest
import webob

from placement_wsgi import deploy, util
from tests.fixtures import api_routes, seed

DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000


@pytest.fixture
def app(conf):
    application = deploy.loadapp(conf)
    yield application
    application.placement_app.database.dispose()


def _path(template: str, database) -> str:
    provider = seed.add_provider(database)
    return api_routes.fill_path(template, {
        "uuid": provider, "consumer_uuid": str(uuid.uuid4()), "resource_class": "VCPU",
        "name": "CUSTOM_HOSTILE"})


def _send(app, method: str, path: str, version, body: bytes) -> webob.Response:
    request = webob.Request.blank(path, method=method, headers={
        "x-auth-token": "admin", "x-roles": "admin,service", "accept": "application/json",
        "openstack-api-version": f"placement {version.major}.{version.minor}"})
    request.body = body
    request.content_type = "application/json"
    return request.get_response(app)


@pytest.mark.parametrize("template, method", api_routes.body_routes())
def test_json_nested_100000_levels_is_400_on_every_body_route(
        app, database, template, method) -> None:
    path = _path(template, database)
    versions = api_routes.body_reading_versions((template, method))
    for version in {versions[0], versions[-1]}:
        response = _send(app, method, path, version, DEEP_ARRAY)
        assert response.status_int == 400, (version, response.body[:300])
        error = response.json["errors"][0]
        assert error["status"] == 400
        assert f"nest deeper than {util.MAX_JSON_DEPTH} levels" in error["detail"]


def test_nesting_at_the_limit_is_decoded_and_validated(app, database) -> None:
    at_limit = ("[" * util.MAX_JSON_DEPTH + "]" * util.MAX_JSON_DEPTH).encode()
    response = _send(app, "POST", "/resource_providers", api_routes.Version(1, 39), at_limit)
    assert response.status_int == 400
    assert "JSON does not validate" in response.json["errors"][0]["detail"]


@pytest.mark.parametrize("template, method", api_routes.body_routes())
def test_nul_in_any_body_string_is_400_on_every_body_route(
        app, database, template, method) -> None:
    path = _path(template, database)
    version = api_routes.body_reading_versions((template, method))[-1]
    for body in ({"name": "x\x00y"}, {"x\x00": 1}, ["a", ["b\x00"]]):
        response = _send(app, method, path, version, json.dumps(body).encode())
        assert response.status_int == 400, (body, response.body[:300])
        assert "contains a NUL character" in response.json["errors"][0]["detail"]

"""Bad input anywhere gets a 4xx in the error format, never a 500.

Every route and method is sent malformed JSON, wrong types, unknown keys,
overlong and non-ASCII strings, bad UUIDs and odd query strings, at a range
of microversions, on every enabled engine (on a server engine, each input at
fewer versions: :func:`_versions`).
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest
import webob

from placement_wsgi import deploy, router

_PATH_VALUES = {
    "uuid": ["not-a-uuid", "ffffffff-ffff-ffff-ffff-ffffffffffff", "é" * 3, "x" * 300],
    "name": ["CUSTOM_X", "not valid", "ü", "C" * 300, "VCPU"],
    "resource_class": ["VCPU", "CUSTOM_NOPE", "lower", "Ω"],
    "consumer_uuid": ["not-a-uuid", "ffffffff-ffff-ffff-ffff-ffffffffffff"],
}

_BODIES = [
    b"",
    b"{",
    b"[]",
    b"null",
    b"42",
    b'"string"',
    b'{"unknown": 1}',
    json.dumps({"name": "x" * 201}).encode(),
    json.dumps({"name": "ünïcødé ☃", "uuid": "not-a-uuid"}).encode(),
    json.dumps({"name": 5, "parent_provider_uuid": 7}).encode(),
    json.dumps({"resource_provider_generation": "zero", "inventories": []}).encode(),
    json.dumps({"resource_provider_generation": 0,
                "inventories": {"VCPU": {"total": 2 ** 40}}}).encode(),
    json.dumps({"resource_provider_generation": 0,
                "inventories": {"VCPU": {"total": 1.5, "allocation_ratio": "x"}}}).encode(),
    json.dumps({"traits": ["a" * 300], "resource_provider_generation": 0}).encode(),
    json.dumps({"aggregates": ["not-a-uuid"], "resource_provider_generation": 0}).encode(),
    json.dumps(["not-a-uuid"]).encode(),
    json.dumps({"allocations": {"x": {}}, "project_id": "", "user_id": 1}).encode(),
    json.dumps({"allocations": [{"resource_provider": {"uuid": 1}}]}).encode(),
    json.dumps({"inventories": {"zz": 1}, "allocations": []}).encode(),
    b"{\"name\": \"\\ud800\"}",
    b"\xff\xfe\x00",
]

_QUERIES = [
    "",
    "?unknown=1",
    "?name=%FF",
    "?uuid=not-a-uuid",
    "?member_of=in:,",
    "?member_of=!x",
    "?resources=VCPU",
    "?resources=VCPU:x,MEMORY_MB:-1",
    "?resources=NOPE:1",
    "?required=!",
    "?required=in:,X",
    "?in_tree=zz",
    "?project_id=",
    "?project_id=p&consumer_type=lower",
    "?limit=0&group_policy=bad&resources1=VCPU:1",
    "?root_required=A&root_required=B&resources=VCPU:1",
    "?same_subtree=,&resources=VCPU:1",
    "?associated=maybe",
    "?name=badformat",
]

_VERSIONS = ["1.0", "1.6", "1.14", "1.20", "1.28", "1.33", "1.38", "latest"]


def _paths() -> list[str]:
    paths = []
    for template in router.ROUTE_DECLARATIONS:
        if not template:
            continue
        variables = re.findall(r"{(\w+)}", template)
        if not variables:
            paths.append(template)
            continue
        for index in range(max(len(_PATH_VALUES[name]) for name in variables)):
            path = template
            for name in variables:
                values = _PATH_VALUES[name]
                path = path.replace("{%s}" % name, quote(values[index % len(values)]))
            paths.append(path)
    return paths


@pytest.fixture
def app(conf):
    application = deploy.loadapp(conf)
    yield application
    application.placement_app.database.dispose()


def _call(app, method: str, path: str, version: str, body: bytes | None = None,
          content_type: str = "application/json") -> webob.Response:
    request = webob.Request.blank(path, method=method, headers={
        "x-auth-token": "admin", "x-roles": "admin,service",
        "openstack-api-version": f"placement {version}"})
    if body is not None:
        request.body = body
        request.content_type = content_type
    return request.get_response(app)


def _assert_client_error(response: webob.Response, what: str) -> None:
    assert response.status_int < 500 or response.status_int == 501, (
        what, response.status, response.body[:500])
    if response.status_int >= 400 and response.status_int != 401:
        payload = json.loads(response.body)
        assert payload["errors"][0]["status"] == response.status_int, what


def _versions(engine: str, versions: list[str], index: int) -> list[str]:
    """The versions the ``index``-th input of a path and method is sent at.

    SQLite, the cheapest engine, sends every input at every version. A server
    engine sends it at ``latest`` (where the most parameters and fields reach
    the database) and at one other version in turn, so every version still
    meets every path and method there, with two requests per input instead
    of one per version (each request there is a few round trips).
    """
    if engine == "sqlite":
        return versions
    older = versions[:-1]
    return [versions[-1], older[index % len(older)]]


def test_bodies_never_cause_server_errors(app, engine) -> None:
    for path in _paths():
        for method in ("PUT", "POST"):
            for index, body in enumerate(_BODIES):
                for version in _versions(engine, ["1.0", "1.14", "1.28", "latest"], index):
                    response = _call(app, method, path, version, body)
                    _assert_client_error(response, (method, path, version, body))


def test_queries_and_versions_never_cause_server_errors(app, engine) -> None:
    for path in _paths():
        for method in ("GET", "DELETE"):
            for index, query in enumerate(_QUERIES):
                for version in _versions(engine, _VERSIONS, index):
                    response = _call(app, method, path + query, version)
                    _assert_client_error(response, (method, path + query, version))


@pytest.mark.parametrize("header", [
    "placement 1.2.3", "placement 1", "placement -1.5", "placement 1.99999999999999999999",
    "placement ☃", "placement", "placement  1.5 ", "",
])
def test_odd_version_headers_are_client_errors(app, header) -> None:
    request = webob.Request.blank("/resource_providers", headers={
        "x-auth-token": "admin", "openstack-api-version": header})
    response = request.get_response(app)
    assert response.status_int in (200, 400, 406), (header, response.status)


def test_wrong_content_types_are_415(app) -> None:
    response = _call(app, "POST", "/resource_providers", "latest", b'{"name": "x"}',
                     content_type="text/plain")
    assert response.status_int == 415

"""The error body: status, title, detail, request id, code from 1.23, extras."""

from __future__ import annotations

import json

import webob

from placement_wsgi import environ_keys, errors
from placement_wsgi.microversion import Version


def _render(error: errors.PlacementError, version: tuple[int, int] | None = (1, 39),
            accept: str = "application/json") -> webob.Response:
    request = webob.Request.blank("/", headers={"Accept": accept})
    request.environ[environ_keys.REQUEST_ID] = "req-1"
    if version is not None:
        request.environ[environ_keys.VERSION] = Version(*version)
    return errors.to_response(error, request)


def test_classes_carry_status_and_code() -> None:
    assert (errors.BadRequest.status, errors.BadRequest.code) == (400, errors.UNDEFINED)
    assert (errors.ConcurrentUpdate.status, errors.ConcurrentUpdate.code) == (
        409, errors.CONCURRENT_UPDATE)
    assert errors.InventoryInUse.code == errors.INVENTORY_INUSE
    custom = errors.BadRequest("m", code=errors.PROVIDER_NOT_FOUND)
    assert (custom.code, str(custom), errors.BadRequest.code) == (
        errors.PROVIDER_NOT_FOUND, "m", errors.UNDEFINED)


def test_json_body_with_code_from_1_23() -> None:
    response = _render(errors.ConcurrentUpdate("generation moved on"))
    assert response.status_int == 409
    assert json.loads(response.body) == {"errors": [{
        "status": 409, "title": "Conflict", "detail": (
            "There was a conflict when trying to complete your request.\n\n"
            " generation moved on"),
        "request_id": "req-1", "code": errors.CONCURRENT_UPDATE}]}


def test_no_code_before_1_23_or_before_negotiation() -> None:
    for version in ((1, 22), None):
        (error,) = json.loads(_render(errors.NotFound("gone"), version).body)["errors"]
        assert "code" not in error


def test_body_extra_members_and_headers() -> None:
    response = _render(errors.NotAcceptable(
        "no", body_extra={"min_version": "1.0"}, headers={"X-Test": "1"}))
    (error,) = json.loads(response.body)["errors"]
    assert error["min_version"] == "1.0"
    assert response.headers["X-Test"] == "1"


def test_405_without_allow_has_no_allow_header() -> None:
    assert "Allow" not in _render(errors.MethodNotAllowed("no")).headers
    with_allow = _render(errors.MethodNotAllowed("no", headers={"Allow": "GET"}))
    assert with_allow.headers["Allow"] == "GET"


def test_detail_keeps_a_message_s_own_trailing_space() -> None:
    (error,) = json.loads(_render(errors.BadRequest("Got: ")).body)["errors"]
    assert error["detail"].endswith("Got: ")


def test_unknown_status_renders_as_500() -> None:
    class Teapot(errors.PlacementError):
        status = 418

    assert _render(Teapot("short and stout")).status_int == 500

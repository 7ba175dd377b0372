"""Shared request/response helpers, UUID checks and the capacity rule."""

from __future__ import annotations

import datetime
import json

import pytest
import webob

from placement_wsgi import capacity, environ_keys, errors, util, uuids
from placement_wsgi.microversion import Version

UUID = "5a4f0c21-7b0b-4c8b-9f4e-2f0d1c3b4a59"


# -- uuids ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [UUID, UUID.upper(), UUID.replace("-", ""),
                                   "{" + UUID + "}", "urn:uuid:" + UUID])
def test_lenient_uuids(value: str) -> None:
    assert uuids.is_lenient_uuid(value)
    assert uuids.canonical_uuid(value) == UUID


@pytest.mark.parametrize("value", ["", "not-a-uuid", UUID[:-1], UUID + "0", 42, None,
                                   UUID.replace("5", "g", 1)])
def test_not_uuids(value: object) -> None:
    assert not uuids.is_lenient_uuid(value)


def test_lenient_uuids_ignore_where_the_hyphens_are() -> None:
    assert uuids.is_lenient_uuid(UUID.replace("-", "", 1) + "-")


def test_strict_uuids_need_the_hyphens() -> None:
    assert uuids.is_strict_uuid(UUID)
    assert not uuids.is_strict_uuid(UUID.replace("-", ""))
    assert not uuids.is_strict_uuid("{" + UUID + "}")


# -- capacity ---------------------------------------------------------------------------


def test_capacity_and_its_truncation() -> None:
    assert capacity.capacity(10, 3, 1.5) == 10.5
    assert capacity.usable(10, 3, 1.5) == 10
    assert capacity.usable(10, 11, 1.0) == -1


def test_capacity_builds_the_sql_expression_too() -> None:
    from placement_wsgi.db import tables

    inventories = tables.inventories
    expression = capacity.capacity(inventories.c.total, inventories.c.reserved,
                                   inventories.c.allocation_ratio)
    assert str(expression) == (
        "(inventories.total - inventories.reserved) * inventories.allocation_ratio")


# -- requests ---------------------------------------------------------------------------


SCHEMA = {"type": "object", "properties": {"uuid": {"type": "string", "format": "uuid"}},
          "additionalProperties": False}


def _request(body: bytes = b"", content_type: str | None = "application/json",
             **headers: str) -> webob.Request:
    request = webob.Request.blank("/", method="POST", body=body, headers=headers)
    if content_type is not None:
        request.content_type = content_type
    request.environ[environ_keys.VERSION] = Version(1, 39)
    return request


def test_require_json_content() -> None:
    util.require_json_content(_request())
    with pytest.raises(errors.UnsupportedMediaType, match="text/plain is not supported"):
        util.require_json_content(_request(content_type="text/plain"))


def test_json_body_parses_and_validates() -> None:
    assert util.json_body(_request(json.dumps({"uuid": UUID}).encode()), SCHEMA) == {
        "uuid": UUID}
    with pytest.raises(errors.BadRequest, match="^Malformed JSON"):
        util.json_body(_request(b"{"), SCHEMA)
    with pytest.raises(errors.BadRequest, match="^Malformed JSON"):
        util.json_body(_request(b'"\\ud800"'), SCHEMA)
    with pytest.raises(errors.BadRequest, match="^JSON does not validate: 'x' is not a 'uuid'"):
        util.json_body(_request(b'{"uuid": "x"}'), SCHEMA)


def test_query_uuids_are_strict_body_uuids_lenient() -> None:
    util.validate({"uuid": UUID.replace("-", "")}, SCHEMA, "")
    with pytest.raises(errors.BadRequest, match="^Invalid query string parameters: "):
        request = webob.Request.blank("/?uuid=" + UUID.replace("-", ""))
        util.validate_query(request, SCHEMA)


def test_query_last_values() -> None:
    assert util.query_last_values(webob.Request.blank("/?a=1&a=2&b=")) == {"a": "2", "b": ""}


def test_check_accept_json() -> None:
    util.check_accept_json(_request())
    util.check_accept_json(_request(Accept="*/*"))
    util.check_accept_json(_request(Accept="application/*"))
    with pytest.raises(errors.NotAcceptable):
        util.check_accept_json(_request(Accept="text/html"))


# -- responses --------------------------------------------------------------------------


def test_http_date_is_gmt() -> None:
    naive = datetime.datetime(2026, 1, 2, 3, 4, 5)
    assert util.http_date(naive) == "Fri, 02 Jan 2026 03:04:05 GMT"
    shifted = naive.replace(tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert util.http_date(shifted) == "Fri, 02 Jan 2026 01:04:05 GMT"


def test_newest_ignores_none() -> None:
    early, late = datetime.datetime(2020, 1, 1), datetime.datetime(2021, 1, 1)
    assert util.newest([None, late, early]) == late
    assert util.newest([None]) is None


def test_json_response_cache_headers_from_1_15() -> None:
    when = datetime.datetime(2026, 1, 2, 3, 4, 5)
    request = _request()
    response = util.json_response(request, {"a": 1}, last_modified=when)
    assert (response.body, response.content_type) == (b'{"a": 1}', "application/json")
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["Last-Modified"] == "Fri, 02 Jan 2026 03:04:05 GMT"
    request.environ[environ_keys.VERSION] = Version(1, 14)
    old = util.json_response(request, {})
    assert "Cache-Control" not in old.headers and "Last-Modified" not in old.headers


def test_empty_response_has_no_content_type() -> None:
    response = util.empty_response(201, location="/x")
    assert response.status_int == 201 and response.location.endswith("/x")
    assert "Content-Type" not in response.headers


def test_links_keep_the_mount_prefix() -> None:
    request = webob.Request.blank("/placement/resource_providers",
                                  environ={"SCRIPT_NAME": "/placement"})
    request.path_info = "/resource_providers"
    assert util.link(request, "/traits") == "/placement/traits"
    assert util.absolute_url(request, "/traits") == "http://localhost/placement/traits"

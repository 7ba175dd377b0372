"""Request parsing and response building shared by every handler.

Handlers parse and format; this module is the one place for the request
and response rules every route shares: Accept and Content-Type checks, JSON
bodies validated against a JSON Schema, query strings, cache headers and
links. The pure UUID checks live in :mod:`placement_wsgi.uuids`.
"""

from __future__ import annotations

import datetime
import email.utils
import json
from collections.abc import Callable, Iterable
from typing import Any

import jsonschema
import webob
from jsonschema import Draft202012Validator, FormatChecker

from placement_wsgi import errors
from placement_wsgi.microversion import version_of
from placement_wsgi.uuids import is_lenient_uuid, is_strict_uuid

_body_format_checker = FormatChecker()


@_body_format_checker.checks("uuid")
def _check_body_uuid(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    return is_lenient_uuid(value)


_query_format_checker = FormatChecker()


@_query_format_checker.checks("uuid")
def _check_query_uuid(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    return is_strict_uuid(value)


# -- request bodies ----------------------------------------------------------------


def require_json_content(request: webob.Request) -> None:
    """415 unless the request body is declared as application/json."""
    media_type = request.content_type or None
    if media_type != "application/json":
        raise errors.UnsupportedMediaType(
            f"The media type {media_type} is not supported, use application/json")


def json_body(request: webob.Request, schema: dict) -> Any:
    """Parse the body as JSON (400 on failure) and validate it with ``schema``."""
    try:
        data = json.loads(request.body.decode("utf-8") if request.body else "")
        # Lone surrogates parse as JSON but are not text any database can store.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeError) as error:
        raise errors.BadRequest(f"Malformed JSON: {error}") from error
    validate(data, schema, prefix="JSON does not validate: ")
    return data


_validators: dict[tuple[int, bool], Draft202012Validator] = {}


def validate(data: Any, schema: dict, prefix: str, *, query: bool = False) -> None:
    """Validate ``data`` with ``schema``; 400 with jsonschema's message on failure."""
    key = (id(schema), query)
    validator = _validators.get(key)
    if validator is None or validator.schema is not schema:
        checker = _query_format_checker if query else _body_format_checker
        validator = Draft202012Validator(schema, format_checker=checker)
        _validators[key] = validator
    try:
        validator.validate(data)
    except jsonschema.ValidationError as error:
        raise errors.BadRequest(f"{prefix}{error}") from error


def check_accept_json(request: webob.Request) -> None:
    """406 unless the client accepts application/json."""
    accept = request.accept
    if not accept or str(accept) in ("", "*/*"):
        return
    if accept.acceptable_offers(["application/json"]):
        return
    raise errors.NotAcceptable("Only application/json is provided")


# -- query strings -------------------------------------------------------------------


def query_last_values(request: webob.Request) -> dict[str, str]:
    """The query string as a flat dict holding the last value of each key."""
    return {key: value for key, value in request.GET.items()}


def validate_query(request: webob.Request, schema: dict) -> dict[str, str]:
    """Validate the flat query dict with ``schema`` (400 on failure)."""
    values = query_last_values(request)
    validate(values, schema, "Invalid query string parameters: ", query=True)
    return values


# -- responses -----------------------------------------------------------------------


def http_date(when: datetime.datetime | None) -> str:
    if when is None:
        when = datetime.datetime.now(datetime.UTC)
    elif when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return email.utils.format_datetime(when.astimezone(datetime.UTC), usegmt=True)


def newest(times: Iterable[datetime.datetime | None]) -> datetime.datetime | None:
    """Latest of the given timestamps (None entries ignored)."""
    present = [when for when in times if when is not None]
    return max(present) if present else None


def json_response(
    request: webob.Request,
    data: Any,
    status: int = 200,
    *,
    last_modified: datetime.datetime | None | Callable[[], Any] = None,
    cache_headers: bool = True,
    omit_last_modified: bool = False,
) -> webob.Response:
    """A JSON response; adds the cache headers from 1.15 when asked to."""
    response = webob.Response(status=status)
    response.body = json.dumps(data).encode("utf-8")
    response.content_type = "application/json"
    response.charset = None
    if cache_headers:
        add_cache_headers(request, response, last_modified, omit_last_modified)
    return response


def empty_response(status: int = 204, *, location: str | None = None) -> webob.Response:
    """A body-less response with no Content-Type."""
    response = webob.Response(status=status)
    response.content_type = None
    if location:
        response.location = location
    return response


def add_cache_headers(
    request: webob.Request,
    response: webob.Response,
    last_modified: datetime.datetime | None = None,
    omit_last_modified: bool = False,
) -> None:
    """Cache-Control and Last-Modified, only at 1.15 or later."""
    if version_of(request) < (1, 15):
        return
    response.headers["Cache-Control"] = "no-cache"
    if not omit_last_modified:
        response.headers["Last-Modified"] = http_date(last_modified)


def link(request: webob.Request, path: str) -> str:
    """A body link: the mount prefix plus ``path``."""
    return request.script_name + path


def absolute_url(request: webob.Request, path: str) -> str:
    return request.application_url + path

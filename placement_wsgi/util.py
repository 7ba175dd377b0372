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
import re
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


#: Deepest nesting of arrays and objects a JSON body may have. The deepest
#: body the API takes (POST /reshaper) nests six levels; the limit keeps the
#: decoder far from Python's recursion limit, whatever a client sends.
MAX_JSON_DEPTH = 32

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def json_nesting_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when the arrays and objects of JSON ``text`` nest deeper than ``limit``.

    A scan of the text before it is decoded (brackets inside strings do not
    count), linear in its length, so a body of ``[[[[...`` is refused without
    the decoder ever recursing into it.
    """
    depth = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub("", text)):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


#: Characters no engine can hold the same way: PostgreSQL text refuses NUL
#: (SQLite and MariaDB would store it), so every engine refuses it up front.
UNSTORABLE_CHARACTERS = frozenset("\x00")


def reject_unstorable(texts: Iterable[str], where: str) -> None:
    """400 when one of ``texts`` holds a character no database can store.

    The one check for every client-supplied string: body strings and keys
    (:func:`json_body`), query keys and values, and the request path
    (``placement_wsgi.deploy``), so the engines agree on what is accepted.
    """
    for text in texts:
        if not UNSTORABLE_CHARACTERS.isdisjoint(text):
            raise errors.BadRequest(
                f"{where} contains a NUL character (\\u0000), which cannot be stored")


def json_strings(data: Any) -> Iterable[str]:
    """Every string of decoded JSON ``data``: object keys and string values."""
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            yield from item.keys()
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def json_body(request: webob.Request, schema: dict) -> Any:
    """Parse the body as JSON (400 on failure) and validate it with ``schema``.

    400 also for a body nested deeper than :data:`MAX_JSON_DEPTH` and for
    strings no database can store (NUL, lone surrogates). The body's size
    was checked before routing (``placement_wsgi.deploy``).
    """
    try:
        text = request.body.decode("utf-8") if request.body else ""
        if json_nesting_exceeds(text):
            raise errors.BadRequest(
                f"Malformed JSON: arrays and objects nest deeper than {MAX_JSON_DEPTH} levels")
        data = json.loads(text)
        # Lone surrogates parse as JSON but are not text any database can store.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeError) as error:
        raise errors.BadRequest(f"Malformed JSON: {error}") from error
    reject_unstorable(json_strings(data), "JSON does not validate: a string")
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

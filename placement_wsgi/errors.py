"""Errors as values: an HTTP status, a message and a placement error code.

Any layer may raise these (objects raise them for decisions such as "in
use" or "generation conflict"; handlers for parsing failures). They are
rendered once, by :func:`to_response`, into the API's error body (a JSON or HTML
``errors`` list with status, title, detail, request id and, from 1.23, a
``code``), honouring the request's Accept header.
"""

from __future__ import annotations

from typing import Any

import webob
import webob.exc

from placement_wsgi import environ_keys

UNDEFINED = "placement.undefined_code"
CONCURRENT_UPDATE = "placement.concurrent_update"
INVENTORY_INUSE = "placement.inventory.inuse"
DUPLICATE_NAME = "placement.duplicate_name"
PROVIDER_INUSE = "placement.resource_provider.inuse"
PROVIDER_CANNOT_DELETE_PARENT = "placement.resource_provider.cannot_delete_parent"
PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
QUERY_DUPLICATE_KEY = "placement.query.duplicate_key"
QUERY_BAD_VALUE = "placement.query.bad_value"
QUERY_MISSING_VALUE = "placement.query.missing_value"


class PlacementError(Exception):
    """Base class: ``status`` and ``code`` are class defaults."""

    status = 500
    code = UNDEFINED

    def __init__(self, message: str = "", *, code: str | None = None,
                 headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.headers = headers or {}
        self.extra = extra

    def __str__(self) -> str:
        return self.message


class BadRequest(PlacementError):
    status = 400


class Unauthorized(PlacementError):
    status = 401


class Forbidden(PlacementError):
    status = 403


class NotFound(PlacementError):
    status = 404


class MethodNotAllowed(PlacementError):
    status = 405


class NotAcceptable(PlacementError):
    status = 406


class Conflict(PlacementError):
    status = 409


class RequestEntityTooLarge(PlacementError):
    status = 413


class UnsupportedMediaType(PlacementError):
    status = 415


class ConcurrentUpdate(Conflict):
    code = CONCURRENT_UPDATE


class InventoryInUse(Conflict):
    code = INVENTORY_INUSE


class DuplicateName(Conflict):
    code = DUPLICATE_NAME


class InternalError(PlacementError):
    status = 500


class ServiceUnavailable(PlacementError):
    status = 503


#: What a request answers when the database stayed unreachable through its retries.
DATABASE_UNREACHABLE = "The database is unreachable; nothing was changed. Try again later."


class InsufficientStorage(PlacementError):
    """The database's disk is full (:class:`placement_wsgi.db.database.DatabaseOutOfSpace`)."""

    status = 507


class NotImplementedYet(PlacementError):
    status = 501


_WEBOB_CLASSES: dict[int, type[webob.exc.HTTPException]] = {
    400: webob.exc.HTTPBadRequest,
    401: webob.exc.HTTPUnauthorized,
    403: webob.exc.HTTPForbidden,
    404: webob.exc.HTTPNotFound,
    405: webob.exc.HTTPMethodNotAllowed,
    406: webob.exc.HTTPNotAcceptable,
    409: webob.exc.HTTPConflict,
    413: webob.exc.HTTPRequestEntityTooLarge,
    415: webob.exc.HTTPUnsupportedMediaType,
    500: webob.exc.HTTPInternalServerError,
    501: webob.exc.HTTPNotImplemented,
    503: webob.exc.HTTPServiceUnavailable,
    507: webob.exc.HTTPInsufficientStorage,
}


def _json_formatter(body: str, status: str, title: str, environ: dict) -> dict:
    """Build the placement error body from webob's rendered parts."""
    # WebOb's own rendering: explanation, a blank line, then the message.
    # Only WebOb's two trailing pad characters go, so a message that ends in
    # an empty value ("Got: ") keeps its own trailing space.
    detail = webob.exc.strip_tags(body)
    if detail.endswith("  "):
        detail = detail[:-2]
    error: dict[str, Any] = {
        "status": int(status.split(" ", 1)[0]),
        "title": title,
        "detail": detail,
        "request_id": environ.get(environ_keys.REQUEST_ID),
    }
    version = environ.get(environ_keys.VERSION)
    if version is not None and version >= (1, 23):
        error["code"] = environ.get(environ_keys.ERROR_CODE) or UNDEFINED
    error.update(environ.get(environ_keys.ERROR_EXTRA) or {})
    return {"errors": [error]}


def to_response(error: PlacementError, request: webob.Request) -> webob.Response:
    """Render ``error`` as a WebOb response for ``request``."""
    request.environ[environ_keys.ERROR_CODE] = error.code
    request.environ[environ_keys.ERROR_EXTRA] = error.extra.get("body_extra")
    webob_class = _WEBOB_CLASSES.get(error.status, webob.exc.HTTPInternalServerError)
    kwargs: dict[str, Any] = {"json_formatter": _json_formatter}
    if error.status == 405:
        allow = error.headers.get("Allow")
        kwargs["headers"] = [("Allow", allow)] if allow else []
        response = webob_class(detail=error.message, **kwargs)
        if not allow:
            response.headers.pop("Allow", None)
    else:
        response = webob_class(detail=error.message, **kwargs)
        for name, value in error.headers.items():
            response.headers[name] = value
    # webob decides JSON / HTML / plain text from Accept when it renders.
    return request.get_response(response)

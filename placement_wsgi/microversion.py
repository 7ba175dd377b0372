"""Microversion negotiation with microversion-parse.

The negotiated version is stored in the WSGI environ; handlers read it
with :func:`version_of` and compare with ``version >= (1, 20)`` or
``version.matches(...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import microversion_parse
import webob

from placement_wsgi import environ_keys, errors

SERVICE_TYPE = "placement"
MIN_VERSION = microversion_parse.Version(1, 0)
MAX_VERSION = microversion_parse.Version(1, 39)
VERSIONS = [f"1.{minor}" for minor in range(MIN_VERSION.minor, MAX_VERSION.minor + 1)]
HEADER = "OpenStack-API-Version"

Version = microversion_parse.Version


class MicroversionError(Exception):
    """Negotiation failed; ``status`` is 400 or 406."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def negotiate(environ: dict[str, Any]) -> Version:
    """Return the version the request asks for, or raise MicroversionError."""
    headers = microversion_parse.headers_from_wsgi_environ(environ)
    requested = microversion_parse.get_version(headers, service_type=SERVICE_TYPE)
    if requested is None:
        return MIN_VERSION
    if requested == "latest":
        return MAX_VERSION
    try:
        version = microversion_parse.parse_version_string(requested)
    except TypeError as error:
        raise MicroversionError(400, f"Invalid microversion: {error}") from error
    version = Version(version.major, version.minor)
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise MicroversionError(406, f"Unacceptable version header: {requested}")
    version.min_version = MIN_VERSION
    version.max_version = MAX_VERSION
    return version


def version_of(request: webob.Request) -> Version:
    """The negotiated version of ``request``."""
    return request.environ[environ_keys.VERSION]


def response_header_value(version: Version) -> str:
    return f"{SERVICE_TYPE} {version.major}.{version.minor}"


def minimum(major: int, minor: int, *, status_405: bool = False) -> Callable:
    """Decorator: the handler exists from version ``major.minor`` on.

    Below it the route answers 404 (not found), or 405 without an Allow
    header when ``status_405`` is set (the one upstream quirk).
    """

    def decorator(handler: Callable) -> Callable:
        def gated(request: webob.Request, *args: Any, **kwargs: Any) -> webob.Response:
            if version_of(request) < (major, minor):
                if status_405:
                    raise errors.MethodNotAllowed(
                        f"The method {request.method} is not allowed for this resource.")
                raise errors.NotFound("")
            return handler(request, *args, **kwargs)

        gated.__name__ = handler.__name__
        gated.__doc__ = handler.__doc__
        gated.__wrapped__ = handler
        return gated

    return decorator

"""A Placement transport that calls PlacementDirect's WSGI app without an HTTP client.

``PlacementDirect`` routes ``requests`` calls into the application through
wsgi-intercept, which costs about as much per request as the application
itself: a request is serialized, parsed back into a WSGI environ, and the
response serialized and parsed again. For a run of tens of thousands of
requests (the offline migration of a large deployment) :func:`open_direct`
keeps PlacementDirect for what it does (building the app from the
configuration, noauth2 identity headers, closing the database pool) but
hands each request to the app as a WebOb request. The app, its middleware
pipeline, microversions, policy and database transactions are the same.

Responses offer what the report client uses of ``requests.Response``:
``status_code``, ``ok``/truth value (status < 400), ``text``, ``content``,
``headers`` and ``json()``.
"""

from __future__ import annotations

import contextlib
import json as jsonlib
from collections.abc import Iterator, Mapping
from typing import Any

import webob

from placement_wsgi.direct import VERSION_HEADER, PlacementDirect


class WsgiResponse:
    """The parts of ``requests.Response`` callers of the transports rely on."""

    def __init__(self, response: webob.Response) -> None:
        self.status_code = response.status_int
        self.content = response.body
        self.headers = dict(response.headers)

    @property
    def ok(self) -> bool:
        return self.status_code < 400

    def __bool__(self) -> bool:
        return self.ok

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return jsonlib.loads(self.content)


class WsgiPlacement:
    """``get/put/post/delete(url, json=None, microversion=None, headers=None)`` on an app."""

    def __init__(self, app: Any, headers: Mapping[str, str] | None = None,
                 default_microversion: str | None = None) -> None:
        self.app = app
        self.headers = {"Accept": "application/json", **dict(headers or {})}
        self.default_microversion = default_microversion

    def request(self, method: str, url: str, json: Any = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> WsgiResponse:
        request = webob.Request.blank(url, method=method)
        request.headers.update(self.headers)
        version = microversion or self.default_microversion
        if version:
            request.headers[VERSION_HEADER] = f"placement {version}"
        if headers:
            request.headers.update(headers)
        if json is not None:
            request.body = jsonlib.dumps(json).encode("utf-8")
            request.content_type = "application/json"
        return WsgiResponse(request.get_response(self.app))

    def get(self, url: str, json: Any = None, microversion: str | None = None,
            headers: Mapping[str, str] | None = None) -> WsgiResponse:
        return self.request("GET", url, json, microversion, headers)

    def put(self, url: str, json: Any = None, microversion: str | None = None,
            headers: Mapping[str, str] | None = None) -> WsgiResponse:
        return self.request("PUT", url, json, microversion, headers)

    def post(self, url: str, json: Any = None, microversion: str | None = None,
             headers: Mapping[str, str] | None = None) -> WsgiResponse:
        return self.request("POST", url, json, microversion, headers)

    def delete(self, url: str, json: Any = None, microversion: str | None = None,
               headers: Mapping[str, str] | None = None) -> WsgiResponse:
        return self.request("DELETE", url, json, microversion, headers)

    def close(self) -> None:
        pass


@contextlib.contextmanager
def open_direct(conf: Any) -> Iterator[WsgiPlacement]:
    """PlacementDirect on ``conf``, called as a WSGI app (see module docstring)."""
    direct = PlacementDirect(conf)
    client = direct.__enter__()
    try:
        yield WsgiPlacement(direct.app, headers={
            key: value for key, value in client.headers.items() if key != "Accept"})
    finally:
        direct.__exit__(None, None, None)

"""A client that calls one WSGI app object directly: no socket, no intercept hook.

Fixtures build their data through the API with it, on the very app the
tests then reach, so the data is what the API writes on every engine.
Responses are ``webob.Response`` (``status_code``, ``json``); errors are
values, as for every :class:`~placement_wsgi.client.ClientBase`.
"""

from __future__ import annotations

import json as json_module
from collections.abc import Callable, Mapping
from typing import Any

import webob

from placement_wsgi.client import ClientBase, JsonBody

#: Identity of the fixtures' requests under noauth2: admin and service roles,
#: which every default policy (legacy or new) lets write.
ADMIN_HEADERS = {"X-Auth-Token": "admin", "X-Roles": "admin,service"}


class WSGIClient(ClientBase[webob.Response]):
    """Requests into ``app`` as admin+service; ``url`` is a path such as ``/traits``."""

    def __init__(self, app: Callable[..., Any], default_microversion: str | None = "latest",
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__({**ADMIN_HEADERS, **dict(headers or {})}, default_microversion)
        self.app = app

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> webob.Response:
        request = webob.Request.blank(
            url, method=method, headers=self.request_headers(microversion, headers))
        if json is not None:
            request.body = json_module.dumps(json).encode()
            request.content_type = "application/json"
        return request.get_response(self.app)

"""Authentication middleware: noauth2 (testing) and keystone's auth_token.

The service root ``/`` (and the empty path) never needs a token.
"""

from __future__ import annotations

import json
from typing import Any

import webob
import webob.dec
import webob.exc

from placement_wsgi import environ_keys
from placement_wsgi.context import RequestContext


def _is_root(environ: dict[str, Any]) -> bool:
    return environ.get("PATH_INFO", "") in ("", "/")


def _unauthorized() -> webob.Response:
    response = webob.Response(status=401, content_type="application/json", charset=None)
    response.body = json.dumps({
        "code": "401 Unauthorized",
        "message": "This server could not verify that you are authorized to access the "
                   "document you requested.",
        "title": "Unauthorized",
    }).encode()
    return response


class NoAuth:
    """Trust the ``X-Auth-Token`` header: ``user[:project]`` (testing only)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    @webob.dec.wsgify
    def __call__(self, request: webob.Request) -> Any:
        if _is_root(request.environ):
            return self.application
        token = request.headers.get("X-Auth-Token")
        if not token:
            return _unauthorized()
        user_id, _, project_id = token.partition(":")
        project_id = project_id or user_id
        if "X-Roles" in request.headers:
            roles = request.headers["X-Roles"]
        else:
            roles = "admin" if user_id == "admin" else ""
        request.headers["X-User-Id"] = user_id
        request.headers["X-Roles"] = roles
        if "OpenStack-System-Scope" not in request.headers:
            request.headers["X-Tenant-Id"] = project_id
        return self.application


class ContextBuilder:
    """Build the RequestContext from the identity headers; 401 without a user."""

    def __init__(self, application: Any, placement_app: Any) -> None:
        self.application = application
        self.placement_app = placement_app

    @webob.dec.wsgify
    def __call__(self, request: webob.Request) -> Any:
        context = RequestContext.from_environ(request.environ, app=self.placement_app)
        if not _is_root(request.environ) and not context.user_id:
            return _unauthorized()
        request.environ[environ_keys.CONTEXT] = context
        return self.application


def keystone_middleware(application: Any, conf: Any) -> Any:
    """Wrap ``application`` in keystonemiddleware's auth_token, except for ``/``."""
    from keystonemiddleware import auth_token

    protected = auth_token.AuthProtocol(application, {"oslo_config_config": conf})

    def dispatch(environ: dict[str, Any], start_response: Any) -> Any:
        if _is_root(environ):
            return application(environ, start_response)
        return protected(environ, start_response)

    return dispatch

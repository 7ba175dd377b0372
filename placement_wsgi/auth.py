"""Authentication middleware: noauth2 (testing) and keystone's auth_token.

The service root ``/`` (and the empty path) never needs a token.
"""

from __future__ import annotations

from typing import Any

import webob
import webob.dec
import webob.exc

from placement_wsgi import environ_keys, errors, microversion
from placement_wsgi.context import RequestContext


def _is_root(environ: dict[str, Any]) -> bool:
    return environ.get("PATH_INFO", "") in ("", "/")


#: What a request without a usable token is told (after WebOb's explanation).
UNAUTHORIZED_DETAIL = "The request needs a valid X-Auth-Token."


def _unauthorized(request: webob.Request,
                  headers: dict[str, str] | None = None) -> webob.Response:
    """The 401 in the API's error format (docs/failure-behaviour.md), like every error.

    Authentication comes before version negotiation, so the version is
    negotiated here only to decide whether the body carries ``code`` (from
    1.23); a header that does not negotiate still gets its 401.
    """
    try:
        request.environ[environ_keys.VERSION] = microversion.negotiate(request.environ)
    except microversion.MicroversionError:
        pass
    return errors.to_response(errors.Unauthorized(UNAUTHORIZED_DETAIL, headers=headers),
                              request)


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
            return _unauthorized(request)
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
            return _unauthorized(request)
        request.environ[environ_keys.CONTEXT] = context
        return self.application


def keystone_middleware(application: Any, conf: Any) -> Any:
    """Wrap ``application`` in keystonemiddleware's auth_token, except for ``/``.

    auth_token answers a missing or invalid token with its own 401 body; it
    is rendered again in the API's error format, keeping its
    ``WWW-Authenticate`` header (where to get a token).
    """
    from keystonemiddleware import auth_token

    protected = auth_token.AuthProtocol(application, {"oslo_config_config": conf})

    def dispatch(environ: dict[str, Any], start_response: Any) -> Any:
        if _is_root(environ):
            return application(environ, start_response)
        request = webob.Request(environ)
        response = request.get_response(protected)
        if response.status_int == 401:
            challenge = response.headers.get("WWW-Authenticate")
            response = _unauthorized(
                request, {"WWW-Authenticate": challenge} if challenge else None)
        return response(environ, start_response)

    return dispatch

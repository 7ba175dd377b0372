"""Build the WSGI application for one configuration (see docs/architecture.md).

``loadapp(conf)`` may be called any number of times in one process; each
app owns its database engine, policy enforcer and options. Nothing is kept
in module globals.
"""

from __future__ import annotations

import itertools
import json
import logging
from typing import Any

import webob
import webob.acceptparse
import webob.dec
import webob.exc
from oslo_config import cfg
from oslo_middleware import cors, request_id

from placement_wsgi import auth, environ_keys, errors, microversion, util
from placement_wsgi import conf as placement_conf
from placement_wsgi.app import PlacementApp
from placement_wsgi.db import migration
from placement_wsgi.db.database import (
    Database,
    DatabaseOutOfSpace,
    DatabaseUnavailable,
    TransactionRetriesExhausted,
)
from placement_wsgi.router import Router

LOG = logging.getLogger(__name__)

#: Retry-After (seconds) of a 503 for an unreachable database.
RETRY_AFTER_SECONDS = 5


class ConfigurationError(Exception):
    """The configuration cannot produce a working service."""


def connection_url(conf: cfg.ConfigOpts) -> str:
    """``[placement_database] connection`` with ``connection_parameters`` appended
    (``""`` when not set): the URL the service opens."""
    group = conf.placement_database
    url = group.connection or ""
    if url and group.connection_parameters:
        url += ("&" if "?" in url else "?") + group.connection_parameters
    return url


def database_from_conf(conf: cfg.ConfigOpts) -> Database:
    """A :class:`Database` for ``[placement_database]`` of ``conf``."""
    group = conf.placement_database
    url = connection_url(conf)
    if not url:
        raise ConfigurationError(
            "[placement_database] connection is not set; give an SQLAlchemy URL such as "
            "sqlite:////var/lib/placement/placement.sqlite")
    return Database(
        url,
        sqlite_busy_timeout_ms=group.sqlite_busy_timeout,
        sqlite_synchronous=group.sqlite_synchronous,
        mysql_sql_mode=group.mysql_sql_mode,
        pool_size=group.max_pool_size,
        max_overflow=group.max_overflow,
        pool_timeout=group.pool_timeout,
        pool_recycle=group.connection_recycle_time,
        echo=group.connection_debug >= 50,
        retry_count=group.transaction_retry_count,
    )


class MicroversionMiddleware:
    """Negotiate the version, render PlacementErrors, add version headers.

    Before routing it also applies the rules every request obeys
    (:func:`_check_request`), so their errors carry the negotiated version's
    error format. ``max_body_size`` is ``[oslo_middleware]
    max_request_body_size`` (None: no limit).
    """

    def __init__(self, application: Any, max_body_size: int | None = None) -> None:
        self.application = application
        self.max_body_size = max_body_size

    @webob.dec.wsgify
    def __call__(self, request: webob.Request) -> webob.Response:
        try:
            version = microversion.negotiate(request.environ)
        except microversion.MicroversionError as error:
            extra = None
            if error.status == 406:
                extra = {"min_version": str(microversion.MIN_VERSION),
                         "max_version": str(microversion.MAX_VERSION)}
            cls = errors.BadRequest if error.status == 400 else errors.NotAcceptable
            return errors.to_response(cls(error.message, body_extra=extra), request)
        request.environ[environ_keys.VERSION] = version
        try:
            _check_request(request, self.max_body_size)
            response = request.get_response(self.application)
        except errors.PlacementError as error:
            response = errors.to_response(error, request)
        except TransactionRetriesExhausted:
            response = errors.to_response(errors.ConcurrentUpdate(
                "The database was too busy to complete the request; try again."), request)
        except DatabaseOutOfSpace as error:
            response = errors.to_response(errors.InsufficientStorage(str(error)), request)
        except DatabaseUnavailable:
            response = errors.to_response(errors.ServiceUnavailable(
                errors.DATABASE_UNREACHABLE,
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)}), request)
        response.headers[microversion.HEADER] = microversion.response_header_value(version)
        response.headers["Vary"] = microversion.HEADER.lower()
        return response


def _check_request(request: webob.Request, max_body_size: int | None) -> None:
    """Rules applied to every request before routing.

    The path must be UTF-8 and the query string too; neither, nor any query
    key or value, may hold a character no database can store
    (:func:`placement_wsgi.util.reject_unstorable`, the same check bodies
    get). A body larger than ``max_body_size`` is a 413, decided from its
    Content-Length before it is read, or, for a body sent without one
    (chunked), by reading at most one byte more than the limit.
    """
    try:
        path = request.path_info
    except UnicodeDecodeError as error:
        raise errors.BadRequest("The request path is not valid UTF-8") from error
    util.reject_unstorable([path], "The request path")
    try:
        query = request.GET
    except UnicodeDecodeError as error:
        raise errors.BadRequest(
            "Invalid query string parameters: the query string is not valid UTF-8") from error
    util.reject_unstorable(itertools.chain.from_iterable(query.items()),
                           "Invalid query string parameters: the query string")
    length = request.headers.get("Content-Length")
    if length is None or length == "":
        _read_undeclared_body(request, max_body_size)
        return
    try:
        size = int(length)
    except ValueError as error:
        raise errors.BadRequest("content-length header must be an integer") from error
    if max_body_size is not None and size > max_body_size:
        raise _body_too_large(max_body_size)
    if size > 0 and not request.headers.get("Content-Type"):
        raise errors.BadRequest("content-type header required when content-length > 0")


def _body_too_large(limit: int) -> errors.RequestEntityTooLarge:
    return errors.RequestEntityTooLarge(
        f"The request body is larger than {limit} bytes, the most this service accepts.")


def _read_undeclared_body(request: webob.Request, max_body_size: int | None) -> None:
    """Read a body sent without Content-Length (chunked), refusing it past the limit."""
    if max_body_size is None or not request.is_body_readable:
        return
    data = request.body_file.read(max_body_size + 1)
    if len(data) > max_body_size:
        raise _body_too_large(max_body_size)
    request.body = data


def _conform_path(environ: dict[str, Any]) -> None:
    """Make ``PATH_INFO`` what PEP 3333 says it is: the raw bytes as latin-1 text.

    An in-process caller (an intercept, a test harness) may put decoded text
    there, such as ``/resource_providers/\u2603``, which WebOb cannot decode
    and on which routing and logging would fail. Encoding it as UTF-8 gives
    the path an HTTP server would have passed, so the caller gets the answer
    the HTTP path gives.
    """
    path = environ.get("PATH_INFO")
    if not isinstance(path, str):
        return
    try:
        path.encode("latin-1")
    except UnicodeEncodeError:
        environ["PATH_INFO"] = path.encode("utf-8", "surrogatepass").decode("latin-1")


def _request_line(environ: dict[str, Any]) -> str:
    """``METHOD path?query`` for a log line, escaped to ASCII; never raises.

    The path is shown as the client sent it: its bytes read as UTF-8 where
    they are UTF-8, escaped where they are not.
    """
    path = f"{environ.get('SCRIPT_NAME', '')}{environ.get('PATH_INFO', '')}"
    try:
        path = path.encode("latin-1").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        pass  # not PEP 3333 text: shown as it is
    query = environ.get("QUERY_STRING")
    line = f"{environ.get('REQUEST_METHOD')} {path}" + (f"?{query}" if query else "")
    return line.encode("ascii", "backslashreplace").decode("ascii")


#: The 500 body used when even rendering the error failed.
_LAST_RESORT_BODY = json.dumps({"errors": [{
    "status": 500, "title": "Internal Server Error",
    "detail": "An unexpected error occurred; it has been logged.",
    "code": errors.UNDEFINED}]}).encode()


class FaultWrapper:
    """Turn any unexpected exception into a logged 500 in the error format.

    It must never raise itself: the request line is logged from the raw
    environ, and should rendering the error fail too, a fixed JSON 500 is
    returned.
    """

    def __init__(self, application: Any) -> None:
        self.application = application

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        _conform_path(environ)
        accept = environ.get("HTTP_ACCEPT")
        if not accept or accept == "*/*" or isinstance(
                webob.acceptparse.create_accept_header(accept),
                webob.acceptparse.AcceptInvalidHeader):
            # Errors are rendered for the Accept header; JSON is the default,
            # also when the header cannot be parsed (it is then no preference).
            environ["HTTP_ACCEPT"] = "application/json"
        request = webob.Request(environ)
        try:
            response = request.get_response(self.application)
        except errors.PlacementError as error:
            response = self._render(error, request)
        except webob.exc.HTTPException as error:
            response = error  # a response raised as an exception (WebOb's convention)
        except Exception:
            LOG.exception("Unexpected error while handling %s", _request_line(environ))
            response = self._render(errors.InternalError(
                "An unexpected error occurred; it has been logged."), request)
        return response(environ, start_response)

    @staticmethod
    def _render(error: errors.PlacementError, request: webob.Request) -> webob.Response:
        try:
            return errors.to_response(error, request)
        except Exception:
            LOG.exception("Could not render an error for %s", _request_line(request.environ))
            return webob.Response(status=500, body=_LAST_RESORT_BODY,
                                  content_type="application/json", charset=None)


def loadapp(conf: cfg.ConfigOpts, database: Database | None = None,
            auth_strategy: str | None = None) -> Any:
    """Return the WSGI application for ``conf`` (see docs/architecture.md).

    With ``[placement_database] sync_on_startup`` the schema is created or
    upgraded and the standard traits and resource classes are loaded.
    ``database`` lets a caller share one engine between apps (tests).
    ``auth_strategy`` ("noauth2" or "keystone") replaces ``[api]
    auth_strategy`` for this app only, so a caller that needs another
    strategy (PlacementDirect) never has to change ``conf``.
    """
    if database is None:
        database = database_from_conf(conf)
    if conf.placement_database.sync_on_startup:
        migration.upgrade(database)
    placement_app = PlacementApp(conf, database)

    application: Any = Router()
    application = MicroversionMiddleware(
        application, max_body_size=placement_conf.max_request_body_size(conf))
    application = FaultWrapper(application)
    application = auth.ContextBuilder(application, placement_app)
    strategy = auth_strategy or conf.api.auth_strategy
    if strategy == "noauth2":
        application = auth.NoAuth(application)
    elif strategy == "keystone":
        application = auth.keystone_middleware(application, conf)
    else:
        raise ConfigurationError(f"unknown [api] auth_strategy {strategy}")
    # The outer fault wrapper catches what the auth middleware itself raises
    # (e.g. keystonemiddleware without a reachable Keystone).
    application = FaultWrapper(application)
    if conf.cors.allowed_origin:
        application = cors.CORS(application, conf)
    application = request_id.RequestId(application)
    application.placement_app = placement_app
    return application

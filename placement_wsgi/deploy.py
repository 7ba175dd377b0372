"""Build the WSGI application for one configuration (design.md contract 2).

``loadapp(conf)`` may be called any number of times in one process; each
app owns its database engine, policy enforcer and options. Nothing is kept
in module globals.
"""

from __future__ import annotations

import logging
from typing import Any

import webob
import webob.dec
from oslo_config import cfg
from oslo_middleware import cors, request_id

from placement_wsgi import auth, errors, microversion, policy
from placement_wsgi.db import migration
from placement_wsgi.db.database import Database, TransactionRetriesExhausted
from placement_wsgi.policy.decisions import PolicyDecisions
from placement_wsgi.router import Router

LOG = logging.getLogger(__name__)


class ConfigurationError(Exception):
    """The configuration cannot produce a working service."""


def database_from_conf(conf: cfg.ConfigOpts) -> Database:
    """A :class:`Database` for ``[placement_database]`` of ``conf``."""
    group = conf.placement_database
    url = group.connection
    if not url:
        raise ConfigurationError(
            "[placement_database] connection is not set; give an SQLAlchemy URL such as "
            "sqlite:////var/lib/placement/placement.sqlite")
    if group.connection_parameters:
        url += ("&" if "?" in url else "?") + group.connection_parameters
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


class PlacementApp:
    """What every request of one app shares: conf, database, policy."""

    def __init__(self, conf: cfg.ConfigOpts, database: Database) -> None:
        self.conf = conf
        self.database = database
        self.enforcer = policy.make_enforcer(conf)
        #: The enforcer's decisions, remembered while its rules stay the same.
        self.policy = PolicyDecisions(self.enforcer)


class MicroversionMiddleware:
    """Negotiate the version, render PlacementErrors, add version headers."""

    def __init__(self, application: Any) -> None:
        self.application = application

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
        request.environ[errors.ENVIRON_VERSION] = version
        try:
            _check_content_headers(request)
            response = request.get_response(self.application)
        except errors.PlacementError as error:
            response = errors.to_response(error, request)
        except TransactionRetriesExhausted:
            response = errors.to_response(errors.ConcurrentUpdate(
                "The database was too busy to complete the request; try again."), request)
        response.headers[microversion.HEADER] = microversion.response_header_value(version)
        response.headers["Vary"] = microversion.HEADER.lower()
        return response


def _check_content_headers(request: webob.Request) -> None:
    """Rules applied to every request before routing (placement-api.md §4)."""
    try:
        request.GET  # noqa: B018 - decoding the query string is the check
    except UnicodeDecodeError as error:
        raise errors.BadRequest(
            "Invalid query string parameters: the query string is not valid UTF-8") from error
    length = request.headers.get("Content-Length")
    if length is None or length == "":
        return
    try:
        size = int(length)
    except ValueError as error:
        raise errors.BadRequest("content-length header must be an integer") from error
    if size > 0 and not request.headers.get("Content-Type"):
        raise errors.BadRequest("content-type header required when content-length > 0")


class FaultWrapper:
    """Turn any unexpected exception into a logged 500 in the error format."""

    def __init__(self, application: Any) -> None:
        self.application = application

    @webob.dec.wsgify
    def __call__(self, request: webob.Request) -> webob.Response:
        accept = request.environ.get("HTTP_ACCEPT")
        if not accept or accept == "*/*":
            # Errors are rendered for the Accept header; JSON is the default.
            request.environ["HTTP_ACCEPT"] = "application/json"
        try:
            return request.get_response(self.application)
        except errors.PlacementError as error:
            return errors.to_response(error, request)
        except Exception:
            LOG.exception("Unexpected error while handling %s %s",
                          request.method, request.path_qs)
            return errors.to_response(errors.InternalError(
                "An unexpected error occurred; it has been logged."), request)


def loadapp(conf: cfg.ConfigOpts, database: Database | None = None) -> Any:
    """Return the WSGI application for ``conf`` (design.md contract 2).

    With ``[placement_database] sync_on_startup`` the schema is created or
    upgraded and the standard traits and resource classes are loaded.
    ``database`` lets a caller share one engine between apps (tests).
    """
    if database is None:
        database = database_from_conf(conf)
    if conf.placement_database.sync_on_startup:
        migration.upgrade(database)
    placement_app = PlacementApp(conf, database)

    application: Any = Router()
    application = MicroversionMiddleware(application)
    application = FaultWrapper(application)
    application = auth.ContextBuilder(application, placement_app)
    strategy = conf.api.auth_strategy
    if strategy == "noauth2":
        application = auth.NoAuth(application)
    elif strategy == "keystone":
        application = auth.keystone_middleware(application, conf)
    else:  # pragma: no cover - oslo.config enforces the choices
        raise ConfigurationError(f"unknown [api] auth_strategy {strategy}")
    # The outer fault wrapper catches what the auth middleware itself raises
    # (e.g. keystonemiddleware without a reachable Keystone).
    application = FaultWrapper(application)
    if conf.cors.allowed_origin:
        application = cors.CORS(application, conf)
    application = request_id.RequestId(application)
    application.placement_app = placement_app
    return application

"""In-process Placement: the service without a server (see docs/architecture.md).

``PlacementDirect(conf)`` builds the WSGI application for ``conf`` (its
database, its options) and routes HTTP requests made with ``requests`` to
a private, unique host name straight into that application with
wsgi-intercept. No socket is opened and no service needs to run, yet the
request goes through exactly the code path a deployed service uses
(middleware, microversions, policy, handlers, database transactions)::

    with PlacementDirect(conf) as placement:
        response = placement.get("/resource_providers", microversion="1.14")

It is how the offline migration (``nova-reshape-manage``) drives a
database with every service stopped, and it works on a database a real
Placement created.

Several may be open at once (each on its own database) and one after
another: wsgi-intercept's hook into ``requests`` is installed while at
least one is open and removed when the last closes. Other hosts keep
reaching the network while the hook is installed.

Authentication: with ``[api] auth_strategy`` left at its default, the app
is built with ``noauth2`` (as upstream's PlacementDirect forces) and the
client sends ``x-auth-token: admin`` with roles ``admin,service``. If the
caller explicitly configured ``keystone``, that is honoured and no identity
headers are sent: pass real ones with ``headers=``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import wsgi_intercept
from oslo_config import cfg
from wsgi_intercept import requests_intercept

from placement_wsgi import conf as placement_conf
from placement_wsgi import deploy, errors
from placement_wsgi.client import VERSION_HEADER, PlacementClient
from placement_wsgi.db.database import (
    Database,
    DatabaseOutOfSpace,
    DatabaseUnavailable,
    TransactionRetriesExhausted,
)
from placement_wsgi.objects import provider_allocations, request_writes, tree_change, tree_state

T = TypeVar("T")

__all__ = ["SCRIPT_NAME", "VERSION_HEADER", "PlacementClient", "PlacementDirect"]

#: Path prefix the app is mounted under (becomes SCRIPT_NAME).
SCRIPT_NAME = "/placement"

_install_lock = threading.Lock()
_install_count = 0
_saved_connection_classes: tuple[Any, Any] | None = None


def _install_intercept() -> None:
    """Hook wsgi-intercept into ``requests`` (reference counted)."""
    global _install_count, _saved_connection_classes
    from requests.packages.urllib3.connectionpool import (  # type: ignore[import-untyped]
        HTTPConnectionPool,
        HTTPSConnectionPool,
    )
    with _install_lock:
        if _install_count == 0:
            _saved_connection_classes = (
                HTTPConnectionPool.ConnectionCls, HTTPSConnectionPool.ConnectionCls)
            requests_intercept.install()
        _install_count += 1


def _uninstall_intercept() -> None:
    """Undo one :func:`_install_intercept`; the last one restores ``requests``."""
    global _install_count, _saved_connection_classes
    from requests.packages.urllib3.connectionpool import (  # type: ignore[import-untyped]
        HTTPConnectionPool,
        HTTPSConnectionPool,
    )
    with _install_lock:
        _install_count -= 1
        if _install_count == 0 and _saved_connection_classes is not None:
            # Restore what was there before, which is not always urllib3's
            # own class (another wsgi-intercept user may have installed first).
            HTTPConnectionPool.ConnectionCls, HTTPSConnectionPool.ConnectionCls = (
                _saved_connection_classes)
            _saved_connection_classes = None


def _explicitly_set(conf: cfg.ConfigOpts, name: str, group: str) -> bool:
    """Whether the caller gave ``[group] name`` a value (file, CLI, env or override).

    Reliable only on a conf nobody has overridden and cleared again: after
    ``clear_override`` oslo.config still reports the override as the
    option's location. So this module never overrides the caller's conf;
    it hands the strategy to :func:`deploy.loadapp` instead.
    """
    location = conf.get_location(name, group)
    return location is not None and location.location not in (
        cfg.Locations.opt_default, cfg.Locations.set_default)


def _parsed(conf: cfg.ConfigOpts) -> bool:
    """Whether ``conf`` has been called (parsed); it registers ``config_file`` then."""
    return "config_file" in conf


class PlacementDirect:
    """Context manager yielding a :class:`PlacementClient` wired into the app.

    ``conf`` is the caller's ``ConfigOpts`` with at least
    ``[placement_database] connection`` set; options are registered on it
    if the caller has not, and a conf never parsed is parsed with no
    arguments and no files (its overrides stay). With ``[placement_database] sync_on_startup`` the
    schema is created/upgraded on entry. ``latest_microversion=True`` makes
    ``latest`` the version of requests that name none. ``headers`` are sent
    on every request (after the default identity headers, so they win).
    On exit the intercept is removed and the app's database pool closed.
    """

    def __init__(self, conf: cfg.ConfigOpts, latest_microversion: bool = False,
                 headers: Mapping[str, str] | None = None) -> None:
        self.conf = conf
        self.latest_microversion = latest_microversion
        self.extra_headers = dict(headers or {})
        self.host = f"placement-direct-{uuid.uuid4().hex}"
        self.port = 80
        self.app: Any = None
        self.client: PlacementClient | None = None

    @property
    def url(self) -> str:
        """Base URL of the intercepted endpoint."""
        return f"http://{self.host}{SCRIPT_NAME}"

    def _build_app(self) -> tuple[Any, bool]:
        """The app, and whether it authenticates with noauth2."""
        conf = self.conf
        if "placement_database" not in conf:
            placement_conf.register_opts(conf)
        if not _parsed(conf):
            # Never parsed (only overrides set): parse nothing, so options that
            # look for files (policy) work; overrides survive parsing.
            conf([], project="placement", default_config_files=[], default_config_dirs=[],
                 use_env=False)
        # The caller's conf is only read, never overridden, so a second
        # PlacementDirect on it sees what the first one saw.
        strategy = (conf.api.auth_strategy if _explicitly_set(conf, "auth_strategy", "api")
                    else "noauth2")
        return deploy.loadapp(conf, auth_strategy=strategy), strategy == "noauth2"

    def __enter__(self) -> PlacementClient:
        if self.app is not None:
            raise RuntimeError("this PlacementDirect is already open")
        app, noauth = self._build_app()
        headers: dict[str, str] = {}
        if noauth:
            headers = {"x-auth-token": "admin", "X-Roles": "admin,service"}
        headers.update(self.extra_headers)
        self.app = app
        wsgi_intercept.add_wsgi_intercept(self.host, self.port, lambda: app,
                                          script_name=SCRIPT_NAME)
        _install_intercept()
        self.client = PlacementClient(
            self.url, headers=headers,
            default_microversion="latest" if self.latest_microversion else None)
        return self.client

    @property
    def database(self) -> Database:
        """The open app's database (its engine and transactions); only while open.

        For in-process tools that keep their own rows beside Placement's
        (the journal of ``nova_reshape``), never to write Placement's tables.
        """
        if self.app is None:
            raise RuntimeError("this PlacementDirect is not open")
        return self.app.placement_app.database

    def read_trees(self, roots: Sequence[str] | None = None,
                   batch_size: int = tree_state.DEFAULT_BATCH_SIZE,
                   ) -> Iterator[tree_state.TreeState]:
        """Bulk read of provider trees with their consumers' allocations (read-only).

        What per-tree API reads would return, for every root provider in
        ``roots`` (uuids) or every root, read ``batch_size`` trees at a time
        in a few set-based statements; see
        :func:`placement_wsgi.objects.tree_state.read_trees`. Only while open.
        """
        if self.app is None:
            raise RuntimeError("this PlacementDirect is not open")
        return tree_state.read_trees(self.app.placement_app.database, roots, batch_size)

    def listed_providers(self, uuids: Sequence[str],
                         names: Sequence[str]) -> list[dict[str, Any]]:
        """The providers with one of ``uuids`` or ``names`` and their roots, as the
        1.14 listing shows them (read-only); see
        :func:`placement_wsgi.objects.tree_state.listed_providers`. Only while open."""
        if self.app is None:
            raise RuntimeError("this PlacementDirect is not open")
        return tree_state.listed_providers(self.app.placement_app.database, uuids, names)

    def read_provider_allocations(
            self, uuids: Sequence[str],
            batch_size: int = provider_allocations.DEFAULT_BATCH_SIZE,
    ) -> Iterator[tuple[str, provider_allocations.ConsumerResources]]:
        """Bulk read of the allocations on each provider of ``uuids`` (read-only), in
        their order: what ``GET /resource_providers/{uuid}/allocations`` lists, in two
        set-based statements per ``batch_size`` providers; see
        :func:`placement_wsgi.objects.provider_allocations.read_provider_allocations`.
        Only while open."""
        if self.app is None:
            raise RuntimeError("this PlacementDirect is not open")
        return provider_allocations.read_provider_allocations(
            self.app.placement_app.database, uuids, batch_size)

    def apply_tree_change(self, change: tree_change.TreeChange,
                          check: tree_change.TreeCheck | None = None) -> dict[str, int]:
        """Write one provider tree's whole change in one database transaction.

        :func:`placement_wsgi.objects.tree_change.apply_tree_change` on the
        open database; returns the providers' generations afterwards and
        raises the API's errors (``errors.ConcurrentUpdate`` for a stale
        generation, ``errors.ServiceUnavailable`` when the database stays
        unreachable, ``errors.InsufficientStorage`` when its disk is full, as
        the app answers), the database untouched. Only while
        open.

        It bypasses the REST pipeline (routing, microversions, policy, JSON)
        on purpose: it serves an in-process operator tool that already holds
        the database credentials (so policy has nothing to protect), it runs
        the same object functions with the same checks the handlers call,
        and it turns a tree's sequence of requests (each its own
        transaction) into one transaction, so a killed run leaves a tree
        either as it was or fully written. Consumers are written as the
        reshaper writes them at its first microversion (1.30). ``check``
        inspects the tree inside the transaction, before commit
        (:class:`~placement_wsgi.objects.tree_change.TreeCheck`).
        """
        return self.apply_tree_changes([change], [check] if check is not None else [])

    def apply_tree_changes(self, changes: Sequence[tree_change.TreeChange],
                           checks: Sequence[tree_change.TreeCheck] = ()) -> dict[str, int]:
        """Several trees' changes in ONE database transaction, all or none, each
        step once for all of them, then each check (see
        :func:`placement_wsgi.objects.tree_change.apply_tree_changes`: the changes
        must share no provider and no consumer). Errors as
        :meth:`apply_tree_change`; only while open."""
        if self.app is None:
            raise RuntimeError("this PlacementDirect is not open")
        conf = self.conf.placement
        try:
            return tree_change.apply_tree_changes(
                self.app.placement_app.database, changes,
                incomplete_project=conf.incomplete_consumer_project_id,
                incomplete_user=conf.incomplete_consumer_user_id, checks=checks)
        except DatabaseUnavailable as error:  # as the app answers (503)
            raise errors.ServiceUnavailable(errors.DATABASE_UNREACHABLE) from error
        except DatabaseOutOfSpace as error:  # as the app answers (507)
            raise errors.InsufficientStorage(str(error)) from error

    def write_requests(self, body: Callable[[request_writes.RequestWrites], T]) -> T:
        """``body(writes)`` in ONE write transaction: the API writes it makes through
        ``writes`` (:class:`~placement_wsgi.objects.request_writes.RequestWrites`)
        each as its request makes it, and whatever it writes on
        ``writes.connection`` (the offline tools' journal), commit together or
        not at all. ``body`` may be run again (a deadlock, a provider race), so
        it keeps no state of its own. Errors as :meth:`apply_tree_change`. Only
        while open.
        """
        if self.app is None:
            raise RuntimeError("this PlacementDirect is not open")
        conf = self.conf.placement

        def run(connection: Any) -> T:
            return body(request_writes.RequestWrites(
                connection, incomplete_project=conf.incomplete_consumer_project_id,
                incomplete_user=conf.incomplete_consumer_user_id))

        try:
            return self.app.placement_app.database.write(run)
        except TransactionRetriesExhausted as error:
            raise errors.ConcurrentUpdate(
                "another process kept changing the same resource providers; try again."
            ) from error
        except DatabaseUnavailable as error:  # as the app answers (503)
            raise errors.ServiceUnavailable(errors.DATABASE_UNREACHABLE) from error
        except DatabaseOutOfSpace as error:  # as the app answers (507)
            raise errors.InsufficientStorage(str(error)) from error

    def read_with_changes(self, changes: Sequence[tree_change.TreeChange],
                          read: Callable[[Any], T]) -> T:
        """``read(connection)`` on the database as ``changes`` would leave it, in one
        transaction that is rolled back: nothing is written
        (:func:`placement_wsgi.objects.tree_change.read_with_changes`; no change:
        the database as it is). Errors as :meth:`apply_tree_change`. Only while open.
        """
        if self.app is None:
            raise RuntimeError("this PlacementDirect is not open")
        conf = self.conf.placement
        try:
            return tree_change.read_with_changes(
                self.app.placement_app.database, changes, read,
                incomplete_project=conf.incomplete_consumer_project_id,
                incomplete_user=conf.incomplete_consumer_user_id)
        except DatabaseUnavailable as error:
            raise errors.ServiceUnavailable(errors.DATABASE_UNREACHABLE) from error

    def __exit__(self, *exc_info: object) -> None:
        try:
            if self.client is not None:
                self.client.close()
        finally:
            wsgi_intercept.remove_wsgi_intercept(self.host, self.port)
            _uninstall_intercept()
            placement_app = getattr(self.app, "placement_app", None)
            if placement_app is not None:
                placement_app.database.dispose()
            self.app = None
            self.client = None


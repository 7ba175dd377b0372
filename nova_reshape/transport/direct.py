"""The in-process transport: PlacementDirect's WSGI app called without an HTTP client.

``PlacementDirect`` routes ``requests`` calls into the application through
wsgi-intercept, which costs about as much per request as the application
itself: a request is serialized, parsed back into a WSGI environ, and the
response serialized and parsed again. For a run of tens of thousands of
requests (the offline migration of a large deployment) :func:`open_direct`
keeps PlacementDirect for what it does (building the app from the
configuration, noauth2 identity headers, closing the database pool) but
hands each request to the app as a WebOb request. The app, its middleware
pipeline, microversions, policy and database transactions are the same.

Opened on the database, it also offers the bulk operations of
PlacementDirect that bypass the REST pipeline for the offline tools' sake:
:meth:`DirectTransport.read_trees` and :meth:`DirectTransport.apply_tree_change`
(one transaction per tree) for the migration,
:meth:`DirectTransport.read_with_changes` (the database read as changes would
leave it, rolled back: the scheduling check's preview),
:meth:`DirectTransport.read_provider_allocations` for the audit.
:func:`on_database` is the one rule telling whether a transport is
in-process on the database and so offers them.

Responses offer what the report client uses of ``requests.Response``:
``status_code``, ``ok``/truth value (status < 400), ``text``, ``content``,
``headers`` and ``json()``.
"""

from __future__ import annotations

import contextlib
import json as jsonlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import webob
from oslo_config import cfg

from nova_reshape.transport.base import JsonBody, Transport
from nova_reshape.transport.counting import CountingTransport
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects.request_writes import RequestWrites
from placement_wsgi.objects.tree_change import TreeChange, TreeCheck
from placement_wsgi.objects.tree_state import DEFAULT_BATCH_SIZE, TreeState

T = TypeVar("T")

#: A WSGI application (the Placement app PlacementDirect builds, or a test's).
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


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


class DirectTransport(Transport[WsgiResponse]):
    """The verbs on a WSGI ``app``: each request is a WebOb request handed to it.

    Opened by :func:`open_direct`, it also offers PlacementDirect's bulk
    :meth:`read_trees` and :meth:`apply_tree_change`.
    """

    def __init__(self, app: WsgiApp, headers: Mapping[str, str] | None = None,
                 default_microversion: str | None = None,
                 direct: PlacementDirect | None = None) -> None:
        super().__init__(headers, default_microversion)
        self.app = app
        self.direct = direct

    def read_trees(self, roots: Sequence[str] | None = None,
                   batch_size: int = DEFAULT_BATCH_SIZE) -> Iterator[TreeState]:
        """:meth:`placement_wsgi.direct.PlacementDirect.read_trees` of the open database."""
        if self.direct is None:
            raise RuntimeError("bulk reads need a transport opened by open_direct")
        return self.direct.read_trees(roots, batch_size)

    def listed_providers(self, uuids: Sequence[str],
                         names: Sequence[str]) -> list[dict[str, Any]]:
        """:meth:`placement_wsgi.direct.PlacementDirect.listed_providers` of the open
        database: the providers with those uuids or names and their roots."""
        if self.direct is None:
            raise RuntimeError("bulk reads need a transport opened by open_direct")
        return self.direct.listed_providers(uuids, names)

    def read_provider_allocations(self, uuids: Sequence[str],
                                  ) -> Iterator[tuple[str, dict[str, dict[str, int]]]]:
        """:meth:`placement_wsgi.direct.PlacementDirect.read_provider_allocations` of
        the open database: each provider's allocations, set-based."""
        if self.direct is None:
            raise RuntimeError("bulk reads need a transport opened by open_direct")
        return self.direct.read_provider_allocations(uuids)

    def apply_tree_change(self, change: TreeChange,
                          check: TreeCheck | None = None) -> dict[str, int]:
        """:meth:`placement_wsgi.direct.PlacementDirect.apply_tree_change` on the open
        database: the tree's whole change in one transaction, not through the API
        (an in-process operator tool holding the database credentials, running the
        same object functions and checks as the handlers)."""
        if self.direct is None:
            raise RuntimeError("bulk writes need a transport opened by open_direct")
        return self.direct.apply_tree_change(change, check)

    def apply_tree_changes(self, changes: Sequence[TreeChange],
                           checks: Sequence[TreeCheck] = ()) -> dict[str, int]:
        """:meth:`placement_wsgi.direct.PlacementDirect.apply_tree_changes` on the open
        database: several trees' changes in one transaction, all or none."""
        if self.direct is None:
            raise RuntimeError("bulk writes need a transport opened by open_direct")
        return self.direct.apply_tree_changes(changes, checks)

    def write_requests(self, body: Callable[[RequestWrites], T]) -> T:
        """:meth:`placement_wsgi.direct.PlacementDirect.write_requests` on the open
        database: API writes, each as its request makes it, in one transaction."""
        if self.direct is None:
            raise RuntimeError("bulk writes need a transport opened by open_direct")
        return self.direct.write_requests(body)

    def read_with_changes(self, changes: Sequence[TreeChange],
                          read: Callable[[Any], T]) -> T:
        """:meth:`placement_wsgi.direct.PlacementDirect.read_with_changes` on the open
        database: ``read(connection)`` on the database as ``changes`` would leave it,
        in one transaction rolled back (nothing written)."""
        if self.direct is None:
            raise RuntimeError("previews need a transport opened by open_direct")
        return self.direct.read_with_changes(changes, read)

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> WsgiResponse:
        request = webob.Request.blank(url, method=method,
                                      headers=self.request_headers(microversion, headers))
        if json is not None:
            request.body = jsonlib.dumps(json).encode("utf-8")
            request.content_type = "application/json"
        return WsgiResponse(request.get_response(self.app))


def on_database(placement: object) -> DirectTransport | None:
    """The in-process transport on the database that ``placement`` is, or counts the
    requests of (:class:`CountingTransport` layers are looked through); None for
    any other transport (HTTP, or a wrapper that only passes requests on).

    The one rule for "in-process on the database": such a run reads trees in
    bulk and writes each tree's change in one call.
    """
    while isinstance(placement, CountingTransport):
        placement = placement.placement
    if isinstance(placement, DirectTransport) and placement.direct is not None:
        return placement
    return None


@contextlib.contextmanager
def open_direct(conf: cfg.ConfigOpts) -> Iterator[DirectTransport]:
    """PlacementDirect on ``conf``, called as a WSGI app (see module docstring).

    PlacementDirect stays open (its app built, its database pool alive) while
    the transport is in use, and is closed when the ``with`` block ends.
    """
    direct = PlacementDirect(conf)
    with direct as client:
        yield DirectTransport(direct.app, headers={
            key: value for key, value in client.headers.items() if key != "Accept"},
            direct=direct)

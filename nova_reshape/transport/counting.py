"""A transport that counts the requests it passes on (the migration's report)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from nova_reshape.transport.base import JsonBody, Placement, Response, Transport, TreeWriter

if TYPE_CHECKING:
    from placement_wsgi.objects.tree_change import TreeChange, TreeCheck


class CountingTransport(Transport[Response]):
    """Passes every request to ``placement`` and counts it in :attr:`calls`,
    the ones that are not reads also in :attr:`writes` ("unchanged" means
    zero writes).

    ``placement`` needs only ``request()`` (any :class:`Placement`); the
    method, body, headers and microversion are passed through untouched. When it also
    writes trees in one call (a :class:`TreeWriter`), so does this, each
    :meth:`apply_tree_change` counted as one call and one write, and each change
    of an :meth:`apply_tree_changes` too (several trees in one transaction).
    Requests may come from several threads at once (reads sent in parallel over
    HTTP): each is counted under a lock.
    """

    def __init__(self, placement: Placement) -> None:
        super().__init__()
        self.placement = placement
        self.calls = 0
        self.writes = 0
        self._counting = threading.Lock()

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> Response:
        """Count the request (a write unless it is a GET), then pass it on."""
        with self._counting:
            self.calls += 1
            if method.upper() != "GET":
                self.writes += 1
        return self.placement.request(method, url, json=json, microversion=microversion,
                                      headers=headers)

    def apply_tree_change(self, change: TreeChange,
                          check: TreeCheck | None = None) -> dict[str, int]:
        """``placement``'s :meth:`TreeWriter.apply_tree_change`, counted as one write."""
        if not isinstance(self.placement, TreeWriter):
            raise TypeError("the wrapped transport cannot write a tree in one call")
        with self._counting:
            self.calls += 1
            self.writes += 1
        return self.placement.apply_tree_change(change, check)

    def apply_tree_changes(self, changes: Sequence[TreeChange],
                           checks: Sequence[TreeCheck] = ()) -> dict[str, int]:
        """``placement``'s :meth:`TreeWriter.apply_tree_changes`, each change counted
        as one call and one write."""
        if not isinstance(self.placement, TreeWriter):
            raise TypeError("the wrapped transport cannot write a tree in one call")
        with self._counting:
            self.calls += len(changes)
            self.writes += len(changes)
        return self.placement.apply_tree_changes(changes, checks)


def innermost(placement: object) -> object:
    """The transport ``placement`` counts the requests of, through every
    :class:`CountingTransport` layer (``placement`` itself if it is none)."""
    while isinstance(placement, CountingTransport):
        placement = placement.placement
    return placement

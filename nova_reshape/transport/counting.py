"""A transport that counts the requests it passes on (the migration's report)."""

from __future__ import annotations

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
    """

    def __init__(self, placement: Placement) -> None:
        super().__init__()
        self.placement = placement
        self.calls = 0
        self.writes = 0

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> Response:
        """Count the request (a write unless it is a GET), then pass it on."""
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
        self.calls += 1
        self.writes += 1
        return self.placement.apply_tree_change(change, check)

    def apply_tree_changes(self, changes: Sequence[TreeChange],
                           checks: Sequence[TreeCheck] = ()) -> dict[str, int]:
        """``placement``'s :meth:`TreeWriter.apply_tree_changes`, each change counted
        as one call and one write."""
        if not isinstance(self.placement, TreeWriter):
            raise TypeError("the wrapped transport cannot write a tree in one call")
        self.calls += len(changes)
        self.writes += len(changes)
        return self.placement.apply_tree_changes(changes, checks)

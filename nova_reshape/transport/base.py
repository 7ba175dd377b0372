"""The transport contract and the base every transport here builds on.

:class:`Transport` is Placement's own client base
(:class:`placement_wsgi.client.ClientBase`): fixed headers, the default
microversion, and the four verbs written once over ``request()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from placement_wsgi.client import VERSION_HEADER, ClientBase

if TYPE_CHECKING:
    from placement_wsgi.objects.tree_change import TreeChange, TreeCheck

#: The base of nova_reshape's transports.
Transport = ClientBase


class Placement(Protocol):
    """What the report client needs from a Placement endpoint."""

    def get(self, url: str, json: Any = None, microversion: str | None = None,
            headers: Mapping[str, str] | None = None) -> Any: ...

    def put(self, url: str, json: Any = None, microversion: str | None = None,
            headers: Mapping[str, str] | None = None) -> Any: ...

    def post(self, url: str, json: Any = None, microversion: str | None = None,
             headers: Mapping[str, str] | None = None) -> Any: ...

    def delete(self, url: str, json: Any = None, microversion: str | None = None,
               headers: Mapping[str, str] | None = None) -> Any: ...


@runtime_checkable
class TreeWriter(Protocol):
    """A transport that writes a provider tree's whole change in one call.

    Offered in-process on the database (``open_direct``) and by the
    transports that wrap one (:class:`~nova_reshape.transport.counting.CountingTransport`);
    see :func:`placement_wsgi.objects.tree_change.apply_tree_change`.
    """

    def apply_tree_change(self, change: TreeChange,
                          check: TreeCheck | None = None) -> dict[str, int]: ...


__all__ = ["VERSION_HEADER", "Placement", "Transport", "TreeWriter"]

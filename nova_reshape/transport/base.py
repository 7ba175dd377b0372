"""The transport contract and the base every transport here builds on.

A transport sends one request: :meth:`Placement.request` is the whole
contract, and every caller (the report client, counting, the migration)
goes through it. :class:`Transport` is Placement's own client base
(:class:`placement_wsgi.client.ClientBase`): fixed headers, the default
microversion, and the four verbs as one-line calls of ``request()``, for
callers that like to write ``transport.get(url)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from placement_wsgi.client import VERSION_HEADER, ClientBase, JsonBody

if TYPE_CHECKING:
    from placement_wsgi.objects.tree_change import TreeChange, TreeCheck

#: The base of nova_reshape's transports (``request()`` plus the four verbs over it).
Transport = ClientBase


class Response(Protocol):
    """What callers read of a response: ``requests.Response`` and the in-process one.

    HTTP errors are values: the truth value is ``status_code < 400``.
    """

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def content(self) -> bytes: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    def json(self) -> Any: ...

    def __bool__(self) -> bool: ...


class Placement(Protocol):
    """What the report client and the counting transport need from a Placement endpoint."""

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> Response:
        """Send one request (``method`` in capitals) and return its response, any status."""
        ...


@runtime_checkable
class TreeWriter(Protocol):
    """A transport that writes a provider tree's whole change in one call.

    Offered in-process on the database (``open_direct``) and by the
    transports that wrap one (:class:`~nova_reshape.transport.counting.CountingTransport`);
    see :func:`placement_wsgi.objects.tree_change.apply_tree_change`, and
    several trees' changes in one transaction
    (:func:`~placement_wsgi.objects.tree_change.apply_tree_changes`).
    """

    def apply_tree_change(self, change: TreeChange,
                          check: TreeCheck | None = None) -> dict[str, int]: ...

    def apply_tree_changes(self, changes: Sequence[TreeChange],
                           checks: Sequence[TreeCheck] = ()) -> dict[str, int]: ...


__all__ = ["VERSION_HEADER", "JsonBody", "Placement", "Response", "Transport", "TreeWriter"]

"""The transport contract and the base every transport here builds on.

:class:`Transport` is Placement's own client base
(:class:`placement_wsgi.client.ClientBase`): fixed headers, the default
microversion, and the four verbs written once over ``request()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from placement_wsgi.client import VERSION_HEADER, ClientBase

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


__all__ = ["VERSION_HEADER", "Placement", "Transport"]

"""Test doubles for the transport tests: a ``request()``-only transport."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nova_reshape.transport import JsonBody


class RequestOnly:
    """A transport with ``request()`` only (the whole :class:`Placement` protocol),
    recording ``(method, url, keyword arguments)`` and answering ``"METHOD url"``."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, Any]]] = []

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> str:
        self.seen.append((method, url, {"json": json, "microversion": microversion,
                                        "headers": headers}))
        return f"{method} {url}"

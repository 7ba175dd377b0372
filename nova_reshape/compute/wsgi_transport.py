"""Former home of the in-process transport; see :mod:`nova_reshape.transport.direct`.

Kept so that existing imports (``open_direct``, ``WsgiPlacement``) go on working.
"""

from __future__ import annotations

from nova_reshape.transport.direct import DirectTransport, WsgiResponse, open_direct

#: The in-process transport's former name.
WsgiPlacement = DirectTransport

__all__ = ["WsgiPlacement", "WsgiResponse", "open_direct"]

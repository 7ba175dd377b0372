"""Former home of the HTTP transport; see :mod:`nova_reshape.transport`.

Kept so that ``from nova_reshape.placement_client import http_placement``
goes on working.
"""

from __future__ import annotations

from nova_reshape.transport.base import Placement
from nova_reshape.transport.http import CONNECT_RETRIES, DEFAULT_TIMEOUT, http_placement

__all__ = ["CONNECT_RETRIES", "DEFAULT_TIMEOUT", "Placement", "http_placement"]

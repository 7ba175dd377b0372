"""How the report client and the migration reach Placement.

A transport is any object with one method, ``request(method, url,
json=None, microversion=None, headers=None)`` (the
:class:`~nova_reshape.transport.base.Placement` protocol), returning a
``requests.Response``-like object (a
:class:`~nova_reshape.transport.base.Response`: ``status_code``, truth value
``status < 400``, ``text``, ``content``, ``headers``, ``json()``); HTTP errors
are values, not exceptions. The transports here share one base,
:class:`~nova_reshape.transport.base.Transport`, whose
``get/put/post/delete`` are one-line calls of ``request()``:

* :func:`~nova_reshape.transport.http.http_placement`: a running service
  over ``requests`` (keep-alive session, connect retries, timeout; a node's
  independent reads may go several at once, see
  :func:`~nova_reshape.transport.http.parallel_reads`);
* :func:`~nova_reshape.transport.direct.open_direct`: the Placement
  application in-process on a database (PlacementDirect's app called
  directly as WSGI, no HTTP emulation);
* :class:`~nova_reshape.transport.counting.CountingTransport`: wraps another
  transport and counts its requests (the migration's report).
"""

from __future__ import annotations

from nova_reshape.transport.base import JsonBody, Placement, Response, Transport
from nova_reshape.transport.counting import CountingTransport
from nova_reshape.transport.direct import DirectTransport, open_direct
from nova_reshape.transport.http import http_placement

__all__ = ["CountingTransport", "DirectTransport", "JsonBody", "Placement", "Response",
           "Transport", "http_placement", "open_direct"]

"""The HTTP transport: a running Placement service over ``requests``.

Over HTTP each request waits for the service, so a run sends the reads it
knows in advance (a node's providers, its moved consumers) several at once:
:func:`parallel_reads` says how many a transport takes.
"""

from __future__ import annotations

from collections.abc import Mapping

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry as Urllib3Retry

from nova_reshape.transport.counting import innermost
from placement_wsgi.client import EnvironmentOnceSession, PlacementClient
from placement_wsgi.db.preflight import masked_url

#: Default seconds to wait for a connection and for each read.
DEFAULT_TIMEOUT = 30.0
#: Attempts to connect again after a failed connection (per request).
CONNECT_RETRIES = 3
#: Independent reads sent at once to a running service (within urllib3's pool of 10).
PARALLEL_READS = 4


class HttpPlacement(PlacementClient):
    """A client of a running service whose session may be shared by threads.

    ``requests`` sends through urllib3's thread-safe connection pool and this
    client keeps no state between requests, so independent reads may go from
    several threads at once, up to ``parallel_reads``.
    """

    def __init__(self, base_url: str, session: requests.Session,
                 headers: Mapping[str, str], timeout: float | None,
                 parallel_reads: int = PARALLEL_READS) -> None:
        super().__init__(base_url, session=session, headers=headers, timeout=timeout)
        self.parallel_reads = parallel_reads


def parallel_reads(placement: object) -> int:
    """How many independent reads ``placement`` takes at once: an
    :class:`HttpPlacement`'s (counting layers looked through), else 1 (an
    in-process transport, or one not known to be safe from several threads)."""
    inner = innermost(placement)
    return inner.parallel_reads if isinstance(inner, HttpPlacement) else 1


def service_url(placement: object) -> str | None:
    """The URL of the service an :class:`HttpPlacement` (counting layers looked
    through) talks to, its password masked: which Placement a journal file's
    record was read from; None for any other transport."""
    inner = innermost(placement)
    return masked_url(inner.base_url) if isinstance(inner, HttpPlacement) else None


def http_placement(url: str, token: str | None = None,
                   headers: Mapping[str, str] | None = None,
                   timeout: float | None = DEFAULT_TIMEOUT,
                   connect_retries: int = CONNECT_RETRIES) -> HttpPlacement:
    """A client for the Placement service at ``url`` (e.g. ``http://host:8778``).

    One ``requests.Session`` keeps connections alive between requests (when
    the service keeps them open) and reads the environment's proxy and CA
    settings once (:class:`EnvironmentOnceSession`).
    ``token`` is sent as ``x-auth-token``; ``headers`` go on every request
    (e.g. ``{"X-Roles": "admin,service"}`` for a noauth2 service). Only
    failures to *connect* are retried (``connect_retries`` times, short
    back-off): the request was not sent, so any method is safe to repeat. A
    failure after sending (read timeout, reset) is raised as is, since the
    server may have acted on it. Up to :data:`PARALLEL_READS` reads may be
    sent at once (:class:`HttpPlacement`).
    """
    session = EnvironmentOnceSession()
    retry = Urllib3Retry(total=None, connect=connect_retries, read=0, redirect=0, status=0,
                         other=0, allowed_methods=None, backoff_factor=0.1,
                         raise_on_status=False)
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    fixed = dict(headers or {})
    if token is not None:
        fixed["x-auth-token"] = token
    return HttpPlacement(url, session=session, headers=fixed, timeout=timeout)

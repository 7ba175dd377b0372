"""The HTTP transport: a running Placement service over ``requests``."""

from __future__ import annotations

from collections.abc import Mapping

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry as Urllib3Retry

from placement_wsgi.client import PlacementClient

#: Default seconds to wait for a connection and for each read.
DEFAULT_TIMEOUT = 30.0
#: Attempts to connect again after a failed connection (per request).
CONNECT_RETRIES = 3


def http_placement(url: str, token: str | None = None,
                   headers: Mapping[str, str] | None = None,
                   timeout: float | None = DEFAULT_TIMEOUT,
                   connect_retries: int = CONNECT_RETRIES) -> PlacementClient:
    """A client for the Placement service at ``url`` (e.g. ``http://host:8778``).

    One ``requests.Session`` keeps connections alive between requests.
    ``token`` is sent as ``x-auth-token``; ``headers`` go on every request
    (e.g. ``{"X-Roles": "admin,service"}`` for a noauth2 service). Only
    failures to *connect* are retried (``connect_retries`` times, short
    back-off): the request was not sent, so any method is safe to repeat. A
    failure after sending (read timeout, reset) is raised as is, since the
    server may have acted on it.
    """
    session = requests.Session()
    retry = Urllib3Retry(total=None, connect=connect_retries, read=0, redirect=0, status=0,
                         other=0, allowed_methods=None, backoff_factor=0.1,
                         raise_on_status=False)
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    fixed = dict(headers or {})
    if token is not None:
        fixed["x-auth-token"] = token
    return PlacementClient(url, session=session, headers=fixed, timeout=timeout)

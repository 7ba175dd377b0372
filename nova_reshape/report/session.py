"""The report client's HTTP plumbing: one send path, microversions, errors, retries.

:class:`PlacementSession` is the only part of the report client that talks
to the transport, always through its one ``request()`` (see
:mod:`nova_reshape.transport`), adding the caller's global request id. Its
collaborators (the provider reads, the setters, the allocations) are given
a session and never see the transport.

Also here, because every collaborator uses them: the microversions the
client speaks, :func:`error_of` (Placement's error body), and nova's two
decorators:

* ``@safe_connect``: a failure to reach Placement at all is logged and the
  method returns ``None`` (callers treat that as "could not do it").
* ``@retries``: up to four attempts of a method that raised :class:`Retry`
  (a provider-generation race Placement lost for us); exhaustion returns
  ``False`` rather than raising. The method's object offers its session
  (:class:`UsesSession`), which sleeps between attempts.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

import requests

from nova_reshape.transport.base import JsonBody, Placement, Response

LOG = logging.getLogger(__name__)

SAME_SUBTREE_VERSION = "1.36"
RESHAPER_VERSION = "1.30"
CONSUMER_GENERATION_VERSION = "1.28"
ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION = "1.26"
POST_RPS_RETURNS_PAYLOAD_API_VERSION = "1.20"
AGGREGATE_GENERATION_VERSION = "1.19"
NESTED_PROVIDER_API_VERSION = "1.14"
GET_USAGES_VERSION = "1.9"

#: Header carrying the caller's global request id to Placement.
REQUEST_ID_HEADER = "X-OpenStack-Request-ID"
#: Attempts made by ``@retries``.
RETRY_ATTEMPTS = 4

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class Retry(Exception):
    """Raised inside a ``@retries`` method to have it run again."""

    def __init__(self, operation: str, reason: str) -> None:
        super().__init__(f"{operation}: {reason}")
        self.operation = operation
        self.reason = reason


def error_of(response: Response) -> dict[str, Any]:
    """The first entry of a Placement error body, or {} if there is none."""
    try:
        errors = response.json().get("errors") or [{}]
    except ValueError:
        return {}
    first = errors[0]
    return first if isinstance(first, dict) else {}


def global_request_id(context: object) -> str | None:
    """The request id a nova-style context carries (``global_id`` or
    ``global_request_id``), if any; contexts are duck-typed as in nova."""
    if context is None:
        return None
    return getattr(context, "global_id", None) or getattr(context, "global_request_id", None)


def request_id_headers(context: object) -> Mapping[str, str] | None:
    """The header carrying ``context``'s request id, or None when it has none."""
    request_id = global_request_id(context)
    return {REQUEST_ID_HEADER: request_id} if request_id else None


class PlacementSession:
    """Sends the report client's requests the way nova's client does.

    ``placement``: the transport. ``retry_backoff``: before attempt ``k``
    (from 0) :meth:`retrying` sleeps ``uniform(0, k * retry_backoff)``
    seconds (nova: up to ``2k``); ``sleep`` is how (tests pass a recorder).
    """

    def __init__(self, placement: Placement, retry_backoff: float = 2.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.placement = placement
        self.retry_backoff = retry_backoff
        self.sleep = sleep

    def send(self, method: str, url: str, data: JsonBody = None, version: str | None = None,
             context: object = None) -> Response:
        """One request through the transport's ``request()``, with the request id."""
        return self.placement.request(method, url, json=data, microversion=version,
                                      headers=request_id_headers(context))

    def get(self, url: str, version: str | None = None, context: object = None) -> Response:
        return self.send("GET", url, None, version, context)

    def put(self, url: str, data: JsonBody, version: str | None = None,
            context: object = None) -> Response:
        return self.send("PUT", url, data, version, context)

    def post(self, url: str, data: JsonBody, version: str | None = None,
             context: object = None) -> Response:
        return self.send("POST", url, data, version, context)

    def delete(self, url: str, version: str | None = None, context: object = None) -> Response:
        return self.send("DELETE", url, None, version, context)

    def retrying(self, name: str, attempt: Callable[[], T]) -> T | bool:
        """``attempt()`` up to four times while it raises :class:`Retry`; False after."""
        for number in range(RETRY_ATTEMPTS):
            if number:
                self.sleep(random.uniform(0, number * self.retry_backoff))
            try:
                return attempt()
            except Retry as retry:
                LOG.debug("Unable to %s because %s; retrying...", retry.operation,
                          retry.reason)
        LOG.error("Failed scheduler client operation %s: out of retries", name)
        return False


class UsesSession(Protocol):
    """An object whose ``@retries`` methods retry through its session."""

    session: PlacementSession


def safe_connect(method: F) -> F:
    """Return None (after a warning) when Placement cannot be reached."""

    @functools.wraps(method)
    def wrapper(self: object, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except requests.exceptions.ConnectionError as error:
            LOG.warning("Placement API service is not responding (%s): %s",
                        method.__name__, error)
            return None

    return wrapper  # type: ignore[return-value]


def retries(method: F) -> F:
    """Run ``method`` up to four times while it raises :class:`Retry`
    (see :meth:`PlacementSession.retrying`); False when every attempt asked
    for a retry."""

    @functools.wraps(method)
    def wrapper(self: UsesSession, *args: Any, **kwargs: Any) -> Any:
        return self.session.retrying(method.__name__,
                                     functools.partial(method, self, *args, **kwargs))

    return wrapper  # type: ignore[return-value]

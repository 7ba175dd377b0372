"""Plumbing shared by the report client's methods.

Microversion constants, request helpers that add the global request id,
and nova's two decorators:

* ``@safe_connect``: a failure to reach Placement at all is logged and the
  method returns ``None`` (callers treat that as "could not do it").
* ``@retries``: up to four attempts of a method that raised :class:`Retry`
  (a provider-generation race Placement lost for us); exhaustion returns
  ``False`` rather than raising.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

import requests

LOG = logging.getLogger("nova_reshape.report")

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


class Retry(Exception):
    """Raised inside a ``@retries`` method to have it run again."""

    def __init__(self, operation: str, reason: str) -> None:
        super().__init__(f"{operation}: {reason}")
        self.operation = operation
        self.reason = reason


def safe_connect(method: F) -> F:
    """Return None (after a warning) when Placement cannot be reached."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except requests.exceptions.ConnectionError as error:
            LOG.warning("Placement API service is not responding (%s): %s",
                        method.__name__, error)
            return None

    return wrapper  # type: ignore[return-value]


def retries(method: F) -> F:
    """Run ``method`` up to four times while it raises :class:`Retry`.

    Before attempt ``k`` (from 0) it sleeps ``uniform(0, k * retry_backoff)``
    seconds (nova: up to ``2k``). Returns False when every attempt asked for
    a retry.
    """

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        for attempt in range(RETRY_ATTEMPTS):
            if attempt:
                self._sleep(random.uniform(0, attempt * self.retry_backoff))
            try:
                return method(self, *args, **kwargs)
            except Retry as retry:
                LOG.debug("Unable to %s because %s; retrying...", retry.operation,
                          retry.reason)
        LOG.error("Failed scheduler client operation %s: out of retries", method.__name__)
        return False

    return wrapper  # type: ignore[return-value]


def error_of(response: requests.Response) -> dict[str, Any]:
    """The first entry of a Placement error body, or {} if there is none."""
    try:
        errors = response.json().get("errors") or [{}]
    except ValueError:
        return {}
    first = errors[0]
    return first if isinstance(first, dict) else {}


def global_request_id(context: Any) -> str | None:
    """The request id a nova-style context carries, if any."""
    if context is None:
        return None
    return getattr(context, "global_id", None) or getattr(context, "global_request_id", None)


class ReportClientBase:
    """Holds the transport and sends requests the way nova's client does."""

    def __init__(self, placement: Any, retry_backoff: float = 2.0) -> None:
        self.placement = placement
        self.retry_backoff = retry_backoff
        self._sleep: Callable[[float], None] = time.sleep

    @staticmethod
    def _headers(context: Any) -> dict[str, str] | None:
        request_id = global_request_id(context)
        return {REQUEST_ID_HEADER: request_id} if request_id else None

    def _send(self, verb: str, url: str, data: Any, version: str | None,
              context: Any) -> requests.Response:
        """One request through the transport's ``verb`` method, with the request id."""
        return getattr(self.placement, verb)(url, json=data, microversion=version,
                                             headers=self._headers(context))

    def get(self, url: str, version: str | None = None,
            context: Any = None) -> requests.Response:
        return self._send("get", url, None, version, context)

    def put(self, url: str, data: Any, version: str | None = None,
            context: Any = None) -> requests.Response:
        return self._send("put", url, data, version, context)

    def post(self, url: str, data: Any, version: str | None = None,
             context: Any = None) -> requests.Response:
        return self._send("post", url, data, version, context)

    def delete(self, url: str, version: str | None = None,
               context: Any = None) -> requests.Response:
        return self._send("delete", url, None, version, context)

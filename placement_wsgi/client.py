"""Clients of one Placement endpoint: the verbs written once over ``request()``.

:class:`ClientBase` holds what every client shares: the fixed headers
(``Accept: application/json`` plus the caller's), the default microversion,
and ``get/put/post/delete(url, json=None, microversion=None, headers=None)``,
each a call of ``request(method, ...)``. A subclass says only how a request
is sent. HTTP errors are values, not exceptions: every client returns the
response whatever its status (callers test ``if response:`` or
``response.status_code``).

:class:`PlacementClient` sends over ``requests`` (an
:class:`EnvironmentOnceSession` by default); it is what
:class:`placement_wsgi.direct.PlacementDirect` yields and what
``nova_reshape.transport`` uses for a running service. nova_reshape's
in-process and counting transports build on :class:`ClientBase` too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

import requests

#: Header carrying the microversion.
VERSION_HEADER = "OpenStack-API-Version"

#: A JSON request body: what ``json.dumps`` is given (None: no body).
JsonBody = Mapping[str, Any] | list[Any] | None

#: The response type a client returns (``requests.Response``, ``webob.Response``, ...).
ResponseT = TypeVar("ResponseT")


class ClientBase(Generic[ResponseT]):
    """``request()`` plus the four verbs; subclasses implement ``request``.

    Generic in the response type its ``request`` returns: a subclass names
    it (``ClientBase[requests.Response]``) and the verbs return that type.
    """

    def __init__(self, headers: Mapping[str, str] | None = None,
                 default_microversion: str | None = None) -> None:
        self.headers = {"Accept": "application/json", **dict(headers or {})}
        self.default_microversion = default_microversion

    def request_headers(self, microversion: str | None = None,
                        headers: Mapping[str, str] | None = None) -> dict[str, str]:
        """The fixed headers, the microversion header, then ``headers`` (which win).

        No microversion given and no default set means no header: Placement 1.0.
        """
        all_headers = dict(self.headers)
        version = microversion or self.default_microversion
        if version:
            all_headers[VERSION_HEADER] = f"placement {version}"
        if headers:
            all_headers.update(headers)
        return all_headers

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> ResponseT:
        """Send one request and return the response (any status)."""
        raise NotImplementedError

    def get(self, url: str, json: JsonBody = None, microversion: str | None = None,
            headers: Mapping[str, str] | None = None) -> ResponseT:
        return self.request("GET", url, json, microversion, headers)

    def put(self, url: str, json: JsonBody = None, microversion: str | None = None,
            headers: Mapping[str, str] | None = None) -> ResponseT:
        return self.request("PUT", url, json, microversion, headers)

    def post(self, url: str, json: JsonBody = None, microversion: str | None = None,
             headers: Mapping[str, str] | None = None) -> ResponseT:
        return self.request("POST", url, json, microversion, headers)

    def delete(self, url: str, json: JsonBody = None, microversion: str | None = None,
               headers: Mapping[str, str] | None = None) -> ResponseT:
        return self.request("DELETE", url, json, microversion, headers)

    def close(self) -> None:
        """Release what the client holds (nothing by default)."""


class EnvironmentOnceSession(requests.Session):
    """A ``requests.Session`` that reads the environment's settings for a
    service once, not on every request.

    ``requests`` looks up the proxies (``*_proxy``, ``no_proxy``), and the CA
    bundle (``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE``) again for every request:
    it walks ``os.environ`` twice, about 0.4 CPU-ms of a request's 2 on this
    machine. A client sends all its requests to one scheme and host, so the
    answer is the same each time; :class:`PlacementClient` uses this session
    unless given one. Contract: for a request without
    per-request proxies, verify, cert or stream (all of ours), the settings
    are those ``requests`` would give, looked up on the first request to
    that scheme and host; an environment changed during the run is not seen
    (it is read when the run starts, like the command's other settings).
    Any other request, and redirects, go through ``requests`` unchanged.
    """

    def __init__(self) -> None:
        super().__init__()
        self._environment_settings: dict[tuple[str, str], dict[str, Any]] = {}

    def merge_environment_settings(self, url: str | bytes | None, proxies: Any, stream: Any,
                                   verify: Any, cert: Any) -> dict[str, Any]:
        if proxies or stream is not None or verify is not None or cert is not None \
                or not isinstance(url, str):
            return super().merge_environment_settings(url, proxies, stream, verify, cert)
        key = urlsplit(url)[:2]
        settings = self._environment_settings.get(key)
        if settings is None:
            settings = super().merge_environment_settings(url, {}, None, None, None)
            self._environment_settings[key] = settings
        return {**settings, "proxies": dict(settings["proxies"])}


class PlacementClient(ClientBase[requests.Response]):
    """A JSON client for one Placement endpoint, over ``requests``.

    ``url`` is a path such as ``/resource_providers?in_tree=...``, joined
    to ``base_url``. Returns ``requests.Response``.
    """

    def __init__(self, base_url: str, session: requests.Session | None = None,
                 headers: Mapping[str, str] | None = None,
                 default_microversion: str | None = None,
                 timeout: float | None = None) -> None:
        super().__init__(headers, default_microversion)
        self.base_url = base_url.rstrip("/")
        self.session = session or EnvironmentOnceSession()
        self.timeout = timeout

    def request(self, method: str, url: str, json: JsonBody = None,
                microversion: str | None = None,
                headers: Mapping[str, str] | None = None) -> requests.Response:
        kwargs: dict[str, Any] = {"headers": self.request_headers(microversion, headers)}
        if json is not None:
            kwargs["json"] = json
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return self.session.request(method, self.base_url + url, **kwargs)

    def close(self) -> None:
        self.session.close()

"""Asking Placement for candidates and reasons: straight from its database, or over HTTP.

A :class:`PlacementView` is what the explain needs from Placement: the
candidates body nova would get, every root provider, and for each root that
is not a candidate the reason. From the database both come from one read
transaction (the candidate engine itself, then one set-based reasons pass);
over HTTP only the candidates and the roots can be read, so roots that are
not candidates are reported without a reason (documented fallback).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode

import requests
from sqlalchemy.engine import Connection

from nova_reshape.scheduler.live.reasons import Reason, RootVerdict, explain_roots, load_roots
from placement_wsgi import errors
from placement_wsgi.candidates import engine
from placement_wsgi.candidates.request import parse_query
from placement_wsgi.candidates.resolved import resolve
from placement_wsgi.constants import SHARING_TRAIT
from placement_wsgi.db import preflight
from placement_wsgi.db.database import Database, DatabaseUnavailable
from placement_wsgi.microversion import Version
from placement_wsgi.service import one_line

T = TypeVar("T")

#: The microversion nova's scheduler asks allocation candidates with.
CANDIDATES_VERSION = Version(1, 36)


class PlacementError(Exception):
    """Placement could not be asked or refused the query (message for the operator).

    ``configuration``: the operator must fix what was given (the database URL or
    the database it names), as opposed to a server that may come back.
    """

    def __init__(self, message: str, configuration: bool = False) -> None:
        super().__init__(message)
        self.configuration = configuration


class QueryRefused(PlacementError):
    """Placement answered the candidates query 400 (an unknown class or trait): nova
    takes that as no valid host."""


@dataclass
class PlacementView:
    body: dict[str, Any]
    verdicts: list[RootVerdict]
    roots: dict[str, str] = field(default_factory=dict)     # uuid -> name
    explained: bool = True

    @property
    def candidate_roots(self) -> set[str]:
        return candidate_roots(self.body)


def merged(views: list[PlacementView]) -> PlacementView:
    """nova's merge of the PCPU query and its VCPU fallback: requests added,
    summaries updated; a root neither query returned keeps the first query's reason."""
    if len(views) == 1:
        return views[0]
    first = views[0]
    body = {"allocation_requests": [r for v in views
                                    for r in v.body.get("allocation_requests", [])],
            "provider_summaries": {}}
    for view in views:
        body["provider_summaries"].update(view.body.get("provider_summaries", {}))
    roots = candidate_roots(body)
    return PlacementView(body, [v for v in first.verdicts if v.uuid not in roots],
                         first.roots, all(v.explained for v in views))


def candidate_roots(body: dict[str, Any]) -> set[str]:
    """Root uuids of the trees the candidates are built around.

    A sharing provider (``MISC_SHARES_VIA_AGGREGATE``) lends resources to
    other trees; it is not a host, so its own root does not count.
    """
    summaries = body.get("provider_summaries", {})
    roots = set()
    for request in body.get("allocation_requests", []):
        for uuid in request.get("allocations", {}):
            summary = summaries.get(uuid, {})
            if SHARING_TRAIT not in summary.get("traits", ()):
                roots.add(summary.get("root_provider_uuid", uuid))
    return roots


def _limited(body: dict[str, Any], limit: int | None) -> bool:
    return limit is not None and len(body.get("allocation_requests", [])) >= limit


def check_placement(url: str | None) -> None:
    """``--placement-database`` checked before anything else is read
    (:mod:`placement_wsgi.db.preflight`: URL, driver, login, schema at head);
    a finding raised as a :class:`PlacementError`. None (over HTTP): nothing to check."""
    if url is None:
        return
    finding = preflight.check(url, setting="--placement-database",
                              schema=preflight.Schema.HEAD)
    if finding is not None:
        raise PlacementError(finding.line("Placement database"),
                             configuration=not finding.problem.transient)


def from_database(url: str, query: list[tuple[str, str]]) -> PlacementView:
    """Candidates and reasons in one read transaction of the Placement database.

    Run :func:`check_placement` first: a wrong URL or database is then one
    line and nothing is created.
    """
    return read_database(url, read_view, query)


def read_database(url: str, body: Callable[..., T], *args: Any) -> T:
    """``body(connection, *args)`` in one read transaction of the Placement database
    at ``url`` (checked first, see :func:`check_placement`); every failure is a
    :class:`PlacementError` of one line."""
    check_placement(url)
    database = Database(url)
    try:
        return database.read(body, *args)
    except errors.PlacementError as error:
        raise PlacementError(f"Placement refuses the query: {error}") from error
    except DatabaseUnavailable as error:
        raise PlacementError(f"cannot read the Placement database {preflight.masked_url(url)}: "
                             f"{errors.DATABASE_UNREACHABLE}") from error
    except PlacementError:
        raise
    except Exception as error:
        raise PlacementError(f"cannot read the Placement database {preflight.masked_url(url)}: "
                             f"{one_line(error)}") from error
    finally:
        database.dispose()


def read_view(connection: Connection, query: list[tuple[str, str]]) -> PlacementView:
    """Candidates and reasons for ``query`` over an open transaction of the Placement
    database (the caller's: a read, or a write it will roll back)."""
    request = parse_query(query, CANDIDATES_VERSION)
    body = json.loads(engine.find_in_transaction(connection, request, engine.Settings()))
    resolved = resolve(connection, request)
    verdicts, _ = explain_roots(connection, resolved, candidate_roots(body),
                                _limited(body, request.limit))
    roots = {uuid: name for uuid, name in load_roots(connection).values()}
    return PlacementView(body, verdicts, roots)


def from_http(url: str, query: list[tuple[str, str]], token: str | None = None,
              timeout: float = 60.0) -> PlacementView:
    """Candidates over the REST API; non-candidate roots without a reason."""
    headers = {"OpenStack-API-Version": f"placement {CANDIDATES_VERSION}",
               "Accept": "application/json"}
    if token:
        headers["X-Auth-Token"] = token
    base = url.rstrip("/")
    try:
        answer = requests.get(f"{base}/allocation_candidates?{urlencode(query)}",
                              headers=headers, timeout=timeout)
        providers = requests.get(f"{base}/resource_providers",
                                 headers={**headers, "OpenStack-API-Version": "placement 1.14"},
                                 timeout=timeout)
    except requests.RequestException as error:
        raise PlacementError(f"cannot reach Placement at {url}: {error}") from error
    if answer.status_code == 400:
        raise QueryRefused(f"Placement answered 400: {answer.text[:300]}")
    for response in (answer, providers):
        if response.status_code != 200:
            raise PlacementError(f"Placement answered {response.status_code}: "
                                 f"{response.text[:300]}")
    body = answer.json()
    roots = {rp["uuid"]: rp["name"] for rp in providers.json()["resource_providers"]
             if rp.get("parent_provider_uuid") is None}
    candidates = candidate_roots(body)
    limit = dict(query).get("limit")
    limited = _limited(body, int(limit) if limit else None)
    verdicts = [RootVerdict(uuid, name, None, Reason.LIMIT if limited else Reason.NOT_EXPLAINED,
                            "not a candidate (the reasons need --placement-database)")
                for uuid, name in roots.items() if uuid not in candidates]
    return PlacementView(body, verdicts, roots, explained=False)

"""Fixtures: this project's Placement reached over real HTTP or through PlacementDirect.

``placement`` is parametrized, so every test using it runs twice on each
engine: once against the service served by a wsgiref server on 127.0.0.1
(a free port, in a thread), once in-process through PlacementDirect. Both
are wrapped in a :class:`~tests.fixtures.transports.RecordingTransport` so
tests can assert exactly which requests the report client sent.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from nova_reshape.report import SchedulerReportClient
from nova_reshape.transport import http_placement
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.fixtures.cyborg_db import cyborg_database
from tests.fixtures.databases import enabled_engines
from tests.fixtures.nova_db import nova_cell
from tests.fixtures.served import served_app
from tests.fixtures.transports import RecordingTransport

ADMIN_HEADERS = {"X-Roles": "admin,service"}


@pytest.fixture(params=["http", "direct"])
def raw_placement(request, db_url) -> Iterator[Any]:
    """A transport to a fresh Placement (unrecorded; also the 'second writer')."""
    conf = make_conf(db_url)
    if request.param == "direct":
        with PlacementDirect(conf) as client:
            yield client
        return
    with served_app(conf) as url:
        client = http_placement(url, token="admin", headers=ADMIN_HEADERS)
        try:
            yield client
        finally:
            client.close()


@pytest.fixture
def placement(raw_placement) -> RecordingTransport:
    return RecordingTransport(raw_placement)


@pytest.fixture
def report(placement) -> SchedulerReportClient:
    return SchedulerReportClient(placement, retry_backoff=0)


class Seeder:
    """Direct API calls that set up state behind the report client's back."""

    def __init__(self, placement: Any) -> None:
        self.placement = placement

    def ok(self, response: Any) -> Any:
        assert response.status_code < 400, (response.status_code, response.text)
        return response.json() if response.content else None

    def provider(self, name: str, parent: str | None = None, uuid_: str | None = None) -> str:
        body = {"name": name, "uuid": uuid_ or str(uuid.uuid4())}
        if parent:
            body["parent_provider_uuid"] = parent
        return self.ok(self.placement.post("/resource_providers", json=body,
                                           microversion="1.20"))["uuid"]

    def generation(self, rp: str) -> int:
        return self.ok(self.placement.get(f"/resource_providers/{rp}",
                                          microversion="1.14"))["generation"]

    def inventory(self, rp: str, inventories: dict[str, Any]) -> None:
        self.ok(self.placement.put(f"/resource_providers/{rp}/inventories", json={
            "resource_provider_generation": self.generation(rp),
            "inventories": inventories}, microversion="1.26"))

    def traits(self, rp: str, traits: list[str]) -> None:
        for trait in traits:
            if trait.startswith("CUSTOM_"):
                self.ok(self.placement.put(f"/traits/{trait}", microversion="1.6"))
        self.ok(self.placement.put(f"/resource_providers/{rp}/traits", json={
            "resource_provider_generation": self.generation(rp), "traits": traits},
            microversion="1.6"))

    def aggregates(self, rp: str, aggregates: list[str]) -> None:
        self.ok(self.placement.put(f"/resource_providers/{rp}/aggregates", json={
            "resource_provider_generation": self.generation(rp), "aggregates": aggregates},
            microversion="1.19"))

    def allocate(self, consumer: str, allocations: dict[str, dict[str, int]],
                 project: str = "p1", user: str = "u1") -> None:
        current = self.ok(self.placement.get(f"/allocations/{consumer}", microversion="1.28"))
        self.ok(self.placement.put(f"/allocations/{consumer}", json={
            "allocations": {rp: {"resources": res} for rp, res in allocations.items()},
            "project_id": project, "user_id": user,
            "consumer_generation": current.get("consumer_generation")}, microversion="1.28"))

    def consumer(self, consumer: str) -> dict[str, Any]:
        return self.ok(self.placement.get(f"/allocations/{consumer}", microversion="1.28"))

    def inventories(self, rp: str) -> dict[str, Any]:
        return self.ok(self.placement.get(f"/resource_providers/{rp}/inventories"))


@pytest.fixture
def seed(raw_placement) -> Seeder:
    return Seeder(raw_placement)


@pytest.fixture(scope="session", params=enabled_engines())
def nova_db_url(request) -> str:
    """A populated nova cell database (tests/fixtures/nova_db.py); tests must not change it."""
    yield from nova_cell(request.param)


@pytest.fixture(scope="session", params=enabled_engines())
def cyborg_db_url(request) -> str:
    """The Cyborg fixture (tests/fixtures/cyborg_db.py); tests must not change it."""
    yield from cyborg_database(request.param)

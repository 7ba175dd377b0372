"""plan_sync (nova's order and statuses) and apply_plan (nova's requests), every engine."""

from __future__ import annotations

from typing import Any

import pytest

from nova_reshape.consistency import aggregates as sync
from nova_reshape.consistency.aggregates import Membership, SyncStatus
from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.novadb.holders import NodeRow
from nova_reshape.transport import open_direct
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import consistency as cx
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import make_conf
from tests.fixtures.transports import RecordingTransport


def aggregate(name, *hosts, uuid=None):
    """``uuid``: default ``u-<name>``; empty: none (an aggregate of an old nova)."""
    return Aggregate(name=name, hosts=frozenset(hosts), metadata={},
                     uuid=f"u-{name}" if uuid is None else uuid or None)


NODES = {"c1": [NodeRow("n-a", "a", "a.x"), NodeRow("n-b", "b", "b.x"),
                NodeRow("n-t1", "twin", "t1"), NodeRow("n-t2", "twin", "t2")],
         "c2": [NodeRow("n-d", "d", "d.x")]}
CELLS = {"a": "c1", "b": "c1", "twin": "c1", "d": "c2", "nonode": "c1", "far": "c3"}


def test_plan_in_novas_order_with_the_hosts_it_cannot_place():
    plan = sync.plan_sync([aggregate("x", "d", "a", "lost", "nonode", "far"),
                           aggregate("y", "a", "lost"), aggregate("old", "b", uuid="")],
                          CELLS, NODES)
    assert plan.memberships == [Membership("u-x", "x", "a", "n-a"),
                                Membership("u-x", "x", "d", "n-d"),
                                Membership("u-y", "y", "a", "n-a")]
    assert (plan.unmapped, plan.no_node, plan.outside, plan.no_uuid, plan.too_many) == (
        ["lost"], ["nonode"], ["far"], ["old"], None)


def test_a_host_with_two_nodes_stops_the_plan_where_it_is_met():
    plan = sync.plan_sync([aggregate("x", "a", "twin", "b"), aggregate("y", "b")], CELLS, NODES)
    # Hosts by name: a, b, then twin stops it; y is never reached.
    assert plan.memberships == [Membership("u-x", "x", "a", "n-a"),
                                Membership("u-x", "x", "b", "n-b")]
    assert plan.too_many == ("twin", 2)
    assert sync.SyncOutcome(plan).status == SyncStatus.TOO_MANY_NODES == 1


def test_the_last_of_4_5_6_wins_as_in_nova():
    plan = sync.SyncPlan(unmapped=["a"], no_node=["b"])
    assert sync.SyncOutcome(plan).status == 5
    assert sync.SyncOutcome(plan, no_provider={"c": "n"}).status == 6
    assert sync.SyncOutcome(sync.SyncPlan(unmapped=["a"])).status == 4
    assert sync.SyncOutcome(sync.SyncPlan()).status == 0


@pytest.fixture
def seeded(db_url):
    with PlacementDirect(make_conf(db_url)) as placement:
        cx.seed_sync(placement)
    return db_url


WANTED = [Membership(api_fx.AZ1_UUID, "az1", fx.CMP1, fx.CMP1_UUID),
          Membership(api_fx.AZ1_UUID, "az1", fx.CMP3, fx.CMP3_UUID),
          Membership(api_fx.FAST_UUID, "fast", fx.CMP1, fx.CMP1_UUID),
          Membership(api_fx.FAST_UUID, "fast", "gone", "d0d0d0d0-0000-4000-8000-000000000000")]


def test_one_listing_per_aggregate_then_novas_read_and_one_write_per_membership(seeded):
    with open_direct(make_conf(seeded)) as direct:
        recorded = RecordingTransport(direct)
        outcome = sync.apply_plan(recorded, sync.SyncPlan(memberships=WANTED))
    aggregates_url = f"/resource_providers/{fx.CMP1_UUID}/aggregates"
    assert [(method, url) for method, url, _, _ in recorded.calls] == [
        ("GET", f"/resource_providers?member_of={api_fx.AZ1_UUID}"),
        ("GET", f"/resource_providers?member_of={api_fx.FAST_UUID}"),
        ("GET", aggregates_url), ("PUT", aggregates_url), ("PUT", aggregates_url),
        ("GET", "/resource_providers/d0d0d0d0-0000-4000-8000-000000000000/aggregates")]
    assert outcome.added == [WANTED[0], WANTED[2]]
    assert outcome.no_provider == {"gone": "d0d0d0d0-0000-4000-8000-000000000000"}
    assert outcome.status == SyncStatus.NO_PROVIDER
    assert cx.provider_aggregates(seeded)[fx.CMP1_UUID] == {
        cx.PLACEMENT_ONLY, api_fx.AZ1_UUID, api_fx.FAST_UUID}


class Failing:
    """Passes requests on, but answers ``status`` to the ``method`` requests."""

    def __init__(self, placement: Any, method: str, status: int) -> None:
        self.placement, self.method, self.status = placement, method, status

    def request(self, method, url, json=None, microversion=None, headers=None):
        if method == self.method and url.endswith("/aggregates"):
            return type("Refused", (), {"status_code": self.status, "text": "",
                                        "__bool__": lambda self: False})()
        return self.placement.request(method, url, json=json, microversion=microversion,
                                      headers=headers)


@pytest.mark.parametrize("method, status, expected", [
    ("GET", 500, SyncStatus.READ_FAILED), ("PUT", 409, SyncStatus.WRITE_FAILED)])
def test_placement_refusing_stops_the_run(seeded, method, status, expected):
    digest = cx.rows_digest(seeded)
    with open_direct(make_conf(seeded)) as direct:
        outcome = sync.apply_plan(Failing(direct, method, status),
                                  sync.SyncPlan(memberships=WANTED))
    assert outcome.status == expected
    assert outcome.stopped[1].endswith(f"HTTP {status}") and outcome.added == []
    assert cx.rows_digest(seeded) == digest

"""Live explain over a seeded Placement database: HTTP and database agree, VCPU fallback.

Runs on every enabled engine (``db_url``); Placement's schema and standard
names come from the fixture, the providers from seeding.py, and the
candidates from this project's Placement engine, as PlacementDirect would
serve them.
"""

from __future__ import annotations

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.live.explain import run
from nova_reshape.scheduler.live.placement import from_http
from nova_reshape.scheduler.live.reasons import Reason
from nova_reshape.scheduler.live.request import LiveRequest
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape.scheduler.live.helpers import explain_on_database
from tests.functional.nova_reshape.scheduler.seeding import compute_node, seed


def test_over_http_candidates_are_the_same_and_the_others_are_listed(db_url):
    seed(db_url, [compute_node("one"), compute_node(
        "tiny", inventories={"MEMORY_MB": {"total": 2048, "reserved": 1536}})])
    live = LiveRequest(vcpus=1, ram_mb=1024, disk_gb=1)
    direct = PlacementDirect(make_conf(db_url))
    with direct:
        from_api = run(live, lambda query: from_http(direct.url, query, token="admin"),
                       SchedulerConfig())
    from_db = explain_on_database(db_url, live)
    assert from_api.view.candidate_roots == from_db.view.candidate_roots
    (verdict,) = from_api.view.verdicts
    assert verdict.name == "tiny" and verdict.reason is Reason.NOT_EXPLAINED
    assert not from_api.view.explained
    assert [h.host for h in from_api.schedule.selected] == ["one"]


def test_pinned_flavor_also_asks_nova_s_vcpu_fallback(db_url):
    seed(db_url, [compute_node("vcpu-only"), compute_node(
        "pcpu", inventories={"PCPU": 16})])
    live = LiveRequest(vcpus=2, ram_mb=512, disk_gb=1,
                       extra_specs={"hw:cpu_policy": "dedicated"})
    result = explain_on_database(db_url, live)
    assert "PCPU%3A2" in result.query and "VCPU%3A2" in result.fallback_query
    assert {result.view.roots[u] for u in result.view.candidate_roots} == {"vcpu-only", "pcpu"}
    assert result.view.verdicts == []

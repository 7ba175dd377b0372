"""find_orphans and delete_orphans on the damaged Placement, every engine.

find_orphans is checked on hand-made reads for each rule; delete_orphans on
tests/fixtures/consistency.py's Placement for nova's sequence of requests and
for the stop after a provider whose deletion failed.
"""

from __future__ import annotations

from typing import Any

import pytest

from nova_reshape.consistency import audit
from nova_reshape.consistency.nova_side import NovaHolders
from nova_reshape.consistency.placement_reads import Provider, ProviderAllocations
from nova_reshape.transport import open_direct
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import consistency as cx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import make_conf
from tests.fixtures.transports import RecordingTransport

ROOT, CHILD, SHARED = "root", "child", "shared"


def on(provider: str, root: str, **consumers: dict[str, int]) -> ProviderAllocations:
    return ProviderAllocations(Provider(provider, provider, root), consumers)


def test_each_rule_of_nova():
    nova = NovaHolders({ROOT: frozenset({"instance", "migration"})})
    reads = [on(ROOT, ROOT, instance={"VCPU": 1}, migration={"MEMORY_MB": 8},
                gone={"DISK_GB": 1}, custom={"CUSTOM_X": 1}, mixed={"CUSTOM_X": 1, "PCPU": 1}),
             on(CHILD, ROOT, gone={"VGPU": 1}, instance={"VGPU": 1}),
             on(SHARED, SHARED, instance={"DISK_GB": 5})]
    found = audit.find_orphans(reads, nova)
    assert [(f.provider, f.consumer, f.root_is_node) for f in found] == [
        (ROOT, "gone", True), (ROOT, "mixed", True), (CHILD, "gone", True),
        (SHARED, "instance", False)]
    assert found[1].resources == {"CUSTOM_X": 1, "PCPU": 1}


def test_every_class_nova_audits():
    assert audit.AUDITED_CLASSES == {
        "VCPU", "MEMORY_MB", "DISK_GB", "VGPU", "NET_BW_EGR_KILOBIT_PER_SEC",
        "NET_BW_IGR_KILOBIT_PER_SEC", "PCPU", "MEM_ENCRYPTION_CONTEXT"}
    assert not audit.is_audited(["CUSTOM_X", "SRIOV_NET_VF", "NUMA_CORE"])


def test_with_some_cells_only_trees_of_their_nodes():
    nova = NovaHolders({ROOT: frozenset()}, complete=False)
    found = audit.find_orphans([on(ROOT, ROOT, a={"VCPU": 1}), on(SHARED, SHARED, b={"VCPU": 1})],
                               nova)
    assert [f.provider for f in found] == [ROOT]


@pytest.fixture
def seeded(db_url):
    with PlacementDirect(make_conf(db_url)) as placement:
        cx.seed_audit(placement)
    return db_url


def findings_of(pairs):
    return [audit.Finding(provider, provider, consumer, {}, True) for provider, consumer in pairs]


def test_a_consumer_on_a_root_and_its_child_is_rewritten_then_deleted(seeded):
    with open_direct(make_conf(seeded)) as direct:
        recorded = RecordingTransport(direct)
        outcome = audit.delete_orphans(recorded, findings_of(
            [(fx.CMP1_UUID, cx.GHOST), (cx.GPU_CHILD, cx.GHOST)]))
    assert outcome.status == audit.AuditStatus.DELETED
    assert [(method, url) for method, url, _, _ in recorded.calls] == [
        ("GET", f"/allocations/{cx.GHOST}"), ("PUT", f"/allocations/{cx.GHOST}"),
        ("GET", f"/allocations/{cx.GHOST}"), ("DELETE", f"/allocations/{cx.GHOST}")]
    put = recorded.calls[1][3]
    assert list(put["allocations"]) == [cx.GPU_CHILD]
    assert (put["project_id"], put["user_id"]) == (cx.PROJECT, cx.USER)
    assert cx.GHOST not in cx.held(seeded)


class Refusing:
    """Passes requests on, but answers 409 to a write for ``consumer``."""

    def __init__(self, placement: Any, consumer: str) -> None:
        self.placement, self.consumer = placement, consumer

    def request(self, method, url, json=None, microversion=None, headers=None):
        if method in ("PUT", "DELETE") and url.endswith(self.consumer):
            return type("Conflict", (), {"status_code": 409, "text": "consumer generation "
                                         "conflict", "json": lambda self: {"errors": [{
                                             "detail": "consumer generation conflict"}]}})()
        return self.placement.request(method, url, json=json, microversion=microversion,
                                      headers=headers)


def test_a_failed_deletion_stops_after_its_provider(seeded):
    pairs = [(fx.CMP1_UUID, fx.DELETED_INSTANCE), (fx.CMP2_UUID, fx.CMP3_GUEST),
             (fx.CMP2_UUID, "70000000-0000-4000-8000-000000000000"), (cx.SHARED, fx.SPREAD)]
    with open_direct(make_conf(seeded)) as direct:
        outcome = audit.delete_orphans(Refusing(direct, fx.CMP3_GUEST), findings_of(pairs))
    assert outcome.status == audit.AuditStatus.DELETE_FAILED == 1
    assert outcome.stopped_at == fx.CMP2_UUID
    assert [finding.consumer for finding, _ in outcome.failed] == [fx.CMP3_GUEST]
    assert outcome.failed[0][1] == "HTTP 409: consumer generation conflict"
    # The provider's other finding was still tried (an unknown consumer: nothing to delete,
    # which counts as deleted); the next provider's was not.
    assert [finding.consumer for finding in outcome.deleted] == [
        fx.DELETED_INSTANCE, "70000000-0000-4000-8000-000000000000"]
    held = cx.held(seeded)
    assert fx.DELETED_INSTANCE not in held
    assert held[fx.SPREAD] == cx.before_delete()[fx.SPREAD]
    assert held[fx.CMP3_GUEST] == cx.before_delete()[fx.CMP3_GUEST]


def test_statuses_are_novas_exit_codes():
    finding = findings_of([(ROOT, "x")])
    assert audit.AuditOutcome([]).status == 0
    assert audit.AuditOutcome(finding).status == 3
    assert audit.AuditOutcome(finding, delete=True, deleted=finding).status == 4

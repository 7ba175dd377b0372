"""Placement calls per node of a run in-process on the database, on every enabled engine.

The check phase reads every tree in batches from the database (no API call
per node); the write phase writes the node's whole plan in one call (one
transaction); the read-back is one bulk read. So a changed node costs
exactly one call, and an unchanged node nothing. Through a transport that
only passes requests on (no bulk write) the plan is the REST sequence, and
a changed node costs exactly its plan's writes. Counted by the run's own
CountingTransport (``NodeResult.calls`` / ``writes``) and cross-checked with
a counting transport around it.
"""

from __future__ import annotations

import pytest

from nova_reshape.compute import migrate, writers
from nova_reshape.transport import CountingTransport, Transport, open_direct
from nova_reshape.virt.host import load_hosts
from placement_wsgi.db.database import Database
from placement_wsgi.objects import tree_change
from placement_wsgi.objects.tree_state import DEFAULT_BATCH_SIZE
from tests.fixtures.config import make_conf
from tests.fixtures.databases import checksum
from tests.functional.nova_reshape.migrate_helpers import generate_rows, shown_simulation

HOSTS = 4


def _deployment(db_url, tmp_path, gpus: int, kinds: tuple[str, ...] = (),
                hosts: int = HOSTS) -> str:
    """``hosts`` hosts of 6 instances, the last one ironic."""
    out = str(tmp_path / "hosts")
    generate_rows(db_url, out, hosts, gpus=gpus, instances=6, ironic=1, kinds=kinds)
    return out


class _RequestsOnly(Transport):
    """Passes requests on and offers nothing else: the run writes the REST sequence."""

    def __init__(self, placement) -> None:
        super().__init__()
        self.placement = placement

    def request(self, method, url, json=None, microversion=None, headers=None):
        return self.placement.request(method, url, json=json, microversion=microversion,
                                      headers=headers)


def _run(db_url, out, requests_only: bool = False):
    with open_direct(make_conf(db_url)) as direct:
        counting = CountingTransport(_RequestsOnly(direct) if requests_only else direct)
        run = migrate.Migration(counting, load_hosts([out]),
                                migrate.Settings(show=shown_simulation), bulk=direct)
        return run.run(), counting.calls


def _planned_writes(result) -> int:
    plan = result.detail.plan
    return (len(plan.create) + len(plan.traits) + len(plan.aggregates) + len(plan.delete)
            + (1 if plan.reshape else len(plan.inventories)))


@pytest.mark.parametrize("gpus", [4, 1, 0])
def test_a_changed_node_costs_one_call_an_unchanged_one_none(db_url, tmp_path, gpus):
    out = _deployment(db_url, tmp_path, gpus)
    results, total = _run(db_url, out)
    changed = [r for r in results if r.status in ("migrated", "updated")]
    assert len(changed) == HOSTS - 1
    for result in changed:
        assert result.calls == result.writes == 1, result.nodename
        assert result.calls <= 5
        assert _planned_writes(result) >= 1
        assert not result.violations
    if gpus == 4:
        assert all(len(r.detail.plan.create) == 4 for r in changed)
    assert total == len(changed)  # the providers are looked up in bulk: no listing
    again, total = _run(db_url, out)
    assert {r.status for r in again} == {"unchanged", "skipped"}
    assert [r.calls for r in again] == [0] * HOSTS
    assert total == 0


@pytest.mark.parametrize("gpus", [4, 1])
def test_over_the_rest_sequence_a_node_costs_its_plans_writes(db_url, tmp_path, gpus):
    """Placement creates a provider without traits and has no bulk trait write, so
    through requests each new child costs its POST and the PUT of its OWNER_NOVA
    trait: with four GPUs a node's first migration is 4 + 4 + root traits +
    reshaper = 10 calls."""
    out = _deployment(db_url, tmp_path, gpus)
    results, total = _run(db_url, out, requests_only=True)
    changed = [r for r in results if r.status in ("migrated", "updated")]
    assert len(changed) == HOSTS - 1
    for result in changed:
        assert result.calls == result.writes == _planned_writes(result), result.nodename
        assert not result.violations
        if gpus == 4:
            assert len(result.detail.plan.create) == 4 and result.calls == 2 * 4 + 2
    assert total == sum(r.calls for r in changed)
    again, _ = _run(db_url, out, requests_only=True)
    assert [r.calls for r in again] == [0] * HOSTS


def _lose_one_gpu(change) -> None:
    for consumer in change.allocations:
        for rp, resources in list(consumer.allocations.items()):
            if "VGPU" in resources:
                del consumer.allocations[rp]
                return


class _LosingOneGpu(CountingTransport):
    """Writes every tree change with one consumer's VGPU dropped (a broken write),
    one node's or the first of several written together."""

    def apply_tree_change(self, change, check=None):
        _lose_one_gpu(change)
        return super().apply_tree_change(change, check)

    def apply_tree_changes(self, changes, checks=()):
        _lose_one_gpu(changes[0])
        return super().apply_tree_changes(changes, checks)


def _tables(db_url) -> str:
    database = Database(db_url)
    try:
        return checksum(database)
    finally:
        database.dispose()


def test_a_write_off_the_plan_is_caught_in_its_transaction_and_rolled_back(db_url, tmp_path):
    """In-process the node is checked as its write leaves it, before commit: a
    broken write is never committed and the run stops at that node."""
    out = _deployment(db_url, tmp_path, gpus=1)
    before = _tables(db_url)
    with open_direct(make_conf(db_url)) as direct:
        results = migrate.Migration(_LosingOneGpu(direct), load_hosts([out]),
                                    migrate.Settings(batch_size=HOSTS), bulk=direct).run()
    first = results[0]
    assert first.status == "invariant-violated"
    codes = {violation.code for violation in first.violations}
    assert {"not_conserved", "not_as_planned"} <= codes, first.violations
    assert "rolled back" in first.error
    assert {r.status for r in results[1:]} == {"not-run", "skipped"}
    assert _tables(db_url) == before


def test_over_http_the_read_back_catches_a_write_off_the_plan(db_url, tmp_path):
    """Without the in-process write the batch is read back after its writes."""
    out = _deployment(db_url, tmp_path, gpus=1)
    with open_direct(make_conf(db_url)) as direct:
        broken = _ReshaperLosingOneGpu(direct)
        results = migrate.Migration(broken, load_hosts([out]),
                                    migrate.Settings(batch_size=1), bulk=direct).run()
    first = results[0]
    assert first.status == "invariant-violated"
    codes = {violation.code for violation in first.violations}
    assert {"not_conserved", "not_as_planned"} <= codes, first.violations
    assert {r.status for r in results[1:]} == {"not-run", "skipped"}


class _ReshaperLosingOneGpu(_RequestsOnly):
    """The REST sequence with one consumer's VGPU dropped from the reshaper."""

    def request(self, method, url, json=None, microversion=None, headers=None):
        if url == "/reshaper":
            for body in json["allocations"].values():
                for rp, entry in list(body["allocations"].items()):
                    if "VGPU" in entry["resources"]:
                        del body["allocations"][rp]
                        return super().request(method, url, json=json,
                                               microversion=microversion, headers=headers)
        return super().request(method, url, json=json, microversion=microversion,
                               headers=headers)


class _AnotherWriterFirst(CountingTransport):
    """Before the run's first write of nodes together, and before its first write of
    one node, another writer bumps a provider the write touches."""

    def __init__(self, placement) -> None:
        super().__init__(placement)
        self.raced: set[str] = set()

    def _race(self, kind: str, change) -> None:
        if kind in self.raced:
            return
        self.raced.add(kind)
        rp = sorted(change.generations)[0]
        generation = self.placement.get(f"/resource_providers/{rp}",
                                        microversion="1.14").json()["generation"]
        assert self.placement.put(f"/resource_providers/{rp}/aggregates", json={
            "aggregates": [], "resource_provider_generation": generation},
            microversion="1.19").ok

    def apply_tree_change(self, change, check=None):
        self._race("one", change)
        return super().apply_tree_change(change, check)

    def apply_tree_changes(self, changes, checks=()):
        self._race("together", changes[0])
        return super().apply_tree_changes(changes, checks)


def test_a_conflict_in_process_is_read_planned_and_written_again(db_url, tmp_path):
    out = _deployment(db_url, tmp_path, gpus=1)
    with open_direct(make_conf(db_url)) as direct:
        results = migrate.Migration(_AnotherWriterFirst(direct), load_hosts([out])).run()
    first = results[0]
    assert first.status == "migrated" and not first.violations, first.error
    assert first.calls == first.writes == 2  # the refused change, then the re-planned one
    assert [r.calls for r in results[1:HOSTS - 1]] == [1] * (HOSTS - 2)


class _RecordingReads:
    """A bulk reader that records the roots of each ``read_trees`` call."""

    def __init__(self, reader) -> None:
        self.reader = reader
        self.reads: list[list[str]] = []

    def read_trees(self, roots=None, batch_size=DEFAULT_BATCH_SIZE):
        self.reads.append(list(roots))
        return self.reader.read_trees(roots, batch_size)


@pytest.mark.parametrize("batch_size", [DEFAULT_BATCH_SIZE, 2])
def test_each_write_batch_is_read_once_and_checked_in_its_transactions(db_url, tmp_path,
                                                                        batch_size):
    """The check takes the described nodes a batch at a time and reads each
    batch's trees in one bulk read; then each batch of nodes to write is read
    again in one bulk read (planned again from it). Each node is checked
    inside its write's transaction, so nothing is read back."""
    out = _deployment(db_url, tmp_path, gpus=1)
    with open_direct(make_conf(db_url)) as direct:
        reader = _RecordingReads(direct)
        results = migrate.Migration(direct, load_hosts([out]),
                                    migrate.Settings(batch_size=batch_size), bulk=reader).run()
    written = [r.root for r in results if r.status == "migrated"]
    assert len(written) == HOSTS - 1
    batches = [written[start:start + batch_size]
               for start in range(0, len(written), batch_size)]
    assert reader.reads == batches + batches
    assert all(not r.violations for r in results)


#: The least transactions per batch in the tests of writes together (the run's is
#: writers.TRANSACTIONS_PER_BATCH, 20): a batch of 40 changed nodes and one of 4 are
#: both written two per transaction, the same writes, a tenth of the nodes.
TOGETHER_TRANSACTIONS = 2
#: Enough changed nodes for a batch to be written two nodes per transaction.
TOGETHER_HOSTS = 2 * TOGETHER_TRANSACTIONS + 1  # one of them ironic


@pytest.fixture
def two_per_transaction(monkeypatch) -> None:
    """A batch of TOGETHER_HOSTS - 1 changed nodes is written two per transaction."""
    monkeypatch.setattr(tree_change, "TRANSACTIONS_PER_BATCH", TOGETHER_TRANSACTIONS)
    assert writers.group_size(writers.InTransactionWriter, TOGETHER_HOSTS - 1) == 2


class _WritesTogether(CountingTransport):
    """Records how many changes each write of one or several trees carried."""

    def __init__(self, placement) -> None:
        super().__init__(placement)
        self.writes_of: list[int] = []

    def apply_tree_change(self, change, check=None):
        self.writes_of.append(1)
        return super().apply_tree_change(change, check)

    def apply_tree_changes(self, changes, checks=()):
        self.writes_of.append(len(changes))
        return super().apply_tree_changes(changes, checks)


def _together(db_url, tmp_path, transport) -> tuple[str, list]:
    out = str(tmp_path / "hosts")
    generate_rows(db_url, out, TOGETHER_HOSTS, gpus=1, instances=2, ironic=1)
    with open_direct(make_conf(db_url)) as direct:
        return out, migrate.Migration(transport(direct), load_hosts([out])).run()


def _migrated(results) -> list:
    return [r for r in results if r.status not in ("skipped",)]


def test_nodes_written_together_cost_one_call_each(db_url, tmp_path, two_per_transaction):
    seen = []

    def transport(direct):
        seen.append(_WritesTogether(direct))
        return seen[-1]

    out, results = _together(db_url, tmp_path, transport)
    changed = _migrated(results)
    assert len(changed) == TOGETHER_HOSTS - 1
    assert {r.status for r in changed} == {"migrated"}
    assert all(r.calls == r.writes == 1 and not r.violations for r in changed)
    assert seen[0].writes_of == [2] * ((TOGETHER_HOSTS - 1) // 2)  # two per transaction
    _, again = _together_again(db_url, out)
    assert {r.status for r in again} == {"unchanged", "skipped"}


def _together_again(db_url, out):
    with open_direct(make_conf(db_url)) as direct:
        counting = CountingTransport(direct)
        return counting, migrate.Migration(counting, load_hosts([out])).run()


class _LosingOneGpuTogether(CountingTransport):
    """Only the writes of several trees lose a VGPU (as :class:`_LosingOneGpu`)."""

    def apply_tree_changes(self, changes, checks=()):
        _lose_one_gpu(changes[0])
        return super().apply_tree_changes(changes, checks)


def test_a_write_together_off_the_plan_is_rolled_back_and_each_node_written_alone(
        db_url, tmp_path, two_per_transaction):
    _, results = _together(db_url, tmp_path, _LosingOneGpuTogether)
    changed = _migrated(results)
    assert {r.status for r in changed} == {"migrated"}
    assert all(not r.violations for r in changed)
    # each node's share of the refused write together, then its own
    assert [r.calls for r in changed] == [2] * len(changed)


class _AnotherWriterBeforeTogether(_AnotherWriterFirst):
    """Races only the run's first write of several trees."""

    def apply_tree_change(self, change, check=None):
        return CountingTransport.apply_tree_change(self, change, check)


def test_a_conflict_in_a_write_together_writes_each_of_its_nodes_alone(db_url, tmp_path,
                                                                       two_per_transaction):
    _, results = _together(db_url, tmp_path, _AnotherWriterBeforeTogether)
    changed = _migrated(results)
    assert {r.status for r in changed} == {"migrated"}
    # the first: its share of the refused write together, its own refused write (the
    # race moved its provider), the re-planned one; the second of that pair: two;
    # every later one: one
    assert [r.calls for r in changed] == [3, 2] + [1] * (len(changed) - 2)

"""migrate_compute_inventory end to end: a generated flat deployment is reshaped.

Runs over real HTTP and through PlacementDirect (the ``placement`` fixture)
on every enabled engine. Expected results come from the generator's data,
not from the migration's own invariant code.
"""

from __future__ import annotations

import dataclasses

import pytest

from nova_reshape.cmd import render
from nova_reshape.compute import migrate, preflight, readback
from nova_reshape.compute.plan import NodePlan
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.transport import open_direct
from nova_reshape.virt.host import load_hosts
from nova_reshape.virt.releases import DriverOptions
from tests.fixtures.config import make_conf
from tests.fixtures.held import CountingHosts, young_heap
from tests.functional.nova_reshape import migrate_helpers as helpers

HOSTS, INSTANCES = 3, 8


@pytest.fixture
def migrating(request, placement, db_url):
    """The transport a run goes through: the API (``placement``, recorded), or
    in-process on the database (``open_direct``: bulk reads, in-transaction writes).
    Chosen with :data:`RUNS`."""
    if request.param == "api":
        yield placement
        return
    with open_direct(make_conf(db_url)) as direct:
        yield direct


#: (``migrating``, ``raw_placement``) of the tests run both ways: the API over HTTP
#: and through PlacementDirect, and in-process. An in-process run does not go through
#: ``raw_placement`` (the test's other writer and reader only), so it runs once.
RUNS = pytest.mark.parametrize(("migrating", "raw_placement"), [
    ("api", "http"), ("api", "direct"), ("in-process", "direct")], indirect=True)


@pytest.fixture
def deployment(db_url, tmp_path):
    out = str(tmp_path / "hosts")
    helpers.generate_rows(db_url, out, HOSTS, gpus=2, instances=INSTANCES, ironic=1)
    return out


def _run(placement, out, **settings):
    return migrate.Migration(placement, load_hosts([out]), migrate.Settings(**settings)).run()


def _statuses(results):
    return {result.nodename: result.status for result in results}


def test_flat_deployment_is_reshaped_and_allocations_conserved(placement, deployment):
    expected = helpers.expected_totals(deployment)
    results = _run(placement, deployment)
    assert _statuses(results) == {"cmp-0000": "migrated", "cmp-0001": "migrated",
                                  "cmp-0002": "skipped"}
    assert all(not r.violations for r in results)
    assert helpers.actual_totals(placement, expected) == expected

    root = helpers.generator.stable_uuid(0, "cmp-0000")
    shape = helpers.tree(placement, root)
    # nova 34 keeps CPUs and memory on the root: no NUMA children by default.
    assert shape["cmp-0000"]["inventory"] == {"DISK_GB": 2000, "VCPU": 32, "PCPU": 16,
                                              "MEMORY_MB": 131072}
    assert {"COMPUTE_NODE", "OWNER_NOVA"} <= shape["cmp-0000"]["traits"]
    assert shape["cmp-0000_pci_0000_84_00_0"] | {"uuid": None} == {
        "uuid": None, "parent": "cmp-0000", "inventory": {"VGPU": 4}, "traits": {"OWNER_NOVA"}}
    assert "cmp-0000_NUMA1" not in shape
    assert shape["cmp-0000_0000:3B:00.0"]["inventory"] == {"CUSTOM_FAST_NIC": 4}
    assert shape["cmp-0000-fpga-0"]["traits"] == {"OWNER_CYBORG",
                                                  "CUSTOM_FPGA_INTEL_PAC_ARRIA10"}
    assert len(shape) == 1 + 2 + 3 + 1
    assert helpers.over_capacity(placement, root) == []


def test_numa_in_placement_makes_cell_providers(placement, deployment):
    expected = helpers.expected_totals(deployment)
    results = _run(placement, deployment, options=DriverOptions(numa_in_placement=True))
    assert _statuses(results)["cmp-0000"] == "migrated"
    assert helpers.actual_totals(placement, expected) == expected
    root = helpers.generator.stable_uuid(0, "cmp-0000")
    shape = helpers.tree(placement, root)
    assert shape["cmp-0000"]["inventory"] == {"DISK_GB": 2000}
    assert shape["cmp-0000_NUMA1"]["inventory"] == {"VCPU": 16, "PCPU": 8, "MEMORY_MB": 65536}
    assert shape["cmp-0000_NUMA1"]["traits"] == {"HW_NUMA_ROOT", "OWNER_NOVA"}
    assert len(shape) == 1 + 2 + 2 + 3 + 1
    assert helpers.over_capacity(placement, root) == []
    placement.reset()
    again = _run(placement, deployment, options=DriverOptions(numa_in_placement=True))
    assert set(_statuses(again).values()) == {"unchanged", "skipped"}
    assert placement.writes() == []


def test_second_run_writes_nothing(placement, deployment):
    _run(placement, deployment)
    placement.reset()
    results = _run(placement, deployment)
    assert set(_statuses(results).values()) == {"unchanged", "skipped"}
    assert placement.writes() == []


def test_dry_run_reports_moves_and_writes_nothing(placement, deployment):
    results = _run(placement, deployment, dry_run=True, show=helpers.shown_simulation)
    assert placement.writes() == []
    node = results[0]
    assert node.status == "would-migrate"
    assert len([m for m in node.moves if m.resource_class == "VGPU"]) == INSTANCES
    assert [m.resource_class for m in node.moves if m.created] == [
        "CUSTOM_PCI_10DE_20B5"]  # instance 0 holds a PCI device, created not moved
    assert not node.detail.tree_after.exists("cmp-0000_NUMA0")  # nova 34 has none


def test_preflight_refusal_writes_nothing(placement, deployment, tmp_path):
    path = f"{deployment}/cmp-0001.yaml"
    with open(path, encoding="utf-8") as stream:
        text = stream.read()
    with open(path, "w", encoding="utf-8") as stream:  # a GPU that is gone
        stream.write(text.replace("0000:85:00.0", "0000:95:00.0", 1))
    results = _run(placement, deployment)
    assert placement.writes() == []
    statuses = _statuses(results)
    assert statuses["cmp-0001"] == "refused" and statuses["cmp-0000"] == "not-run"
    codes = {f.code for f in results[1].findings}
    assert "device_missing" in codes or "description_mismatch" in codes


def test_failure_before_the_reshape_then_rerun_completes(placement, deployment):
    expected = helpers.expected_totals(deployment)
    raised = []

    def die_at_reshape(method, url):
        if url == "/reshaper" and not raised:
            raised.append(url)
            raise RuntimeError("killed")

    placement.before = die_at_reshape
    results = _run(placement, deployment)
    assert _statuses(results)["cmp-0000"] == "failed"
    assert _statuses(results)["cmp-0001"] == "not-run"
    placement.before = None
    # The first node's empty children exist now; the re-run reshapes into them.
    results = _run(placement, deployment)
    assert _statuses(results) == {"cmp-0000": "migrated", "cmp-0001": "migrated",
                                  "cmp-0002": "skipped"}
    assert helpers.actual_totals(placement, expected) == expected
    assert _statuses(_run(placement, deployment))["cmp-0000"] == "unchanged"


def test_conflicts_left_after_retries(placement, raw_placement, deployment):
    root = helpers.generator.stable_uuid(0, "cmp-0000")

    def another_writer(method, url):
        if url == "/reshaper":
            gen = helpers.ok(raw_placement.get(f"/resource_providers/{root}",
                                               microversion="1.14"))["generation"]
            helpers.ok(raw_placement.put(f"/resource_providers/{root}/aggregates", json={
                "aggregates": [], "resource_provider_generation": gen}, microversion="1.19"))

    placement.before = another_writer
    results = _run(placement, deployment)
    statuses = _statuses(results)
    # The conflicting node is given up after the tracker's four attempts; the
    # others go on.
    assert statuses["cmp-0000"] == "conflict" and statuses["cmp-0001"] == "migrated"
    assert len([c for c in placement.calls if c[1] == "/reshaper"]) == 4 + 1
    placement.before = None
    assert _statuses(_run(placement, deployment)) == {
        "cmp-0000": "migrated", "cmp-0001": "unchanged", "cmp-0002": "skipped"}


@pytest.mark.parametrize("batch_size,checked", [(1, 1), (2, 2)])
def test_invariant_violation_stops_the_run_after_the_batch(placement, deployment, monkeypatch,
                                                           batch_size, checked):
    """Written nodes are read back and checked per batch: a violation stops the
    run once its batch is checked (the batch's other nodes are written and
    checked too); the nodes of later batches are not run."""
    from nova_reshape.compute import invariants

    seen = []

    def broken(*args, **kwargs):
        seen.append(args)
        return [invariants.Violation("not_conserved", "c", None, "VGPU", "lost one")]

    monkeypatch.setattr(readback.invariants, "check_node", broken)
    results = _run(placement, deployment, batch_size=batch_size)
    second = "not-run" if batch_size == 1 else "invariant-violated"
    assert _statuses(results) == {"cmp-0000": "invariant-violated", "cmp-0001": second,
                                  "cmp-0002": "skipped"}
    assert len(seen) == checked and str(results[0].violations[0]) == "not_conserved: lost one"
    assert [url for _, url in placement.writes()].count("/reshaper") == checked


def test_pre_train_pinning_and_a_disabled_host(placement, db_url, tmp_path):
    out = str(tmp_path / "pinned")
    helpers.generate_rows(db_url, out, 2, gpus=2, instances=INSTANCES,
                          kinds=(*helpers.generator.KINDS, "pinned", "disabled"))
    expected = helpers.expected_totals(out)
    results = _run(placement, out)
    assert _statuses(results) == {"cmp-0000": "migrated", "cmp-0001": "migrated"}
    assert all(not r.violations for r in results)
    assert helpers.actual_totals(placement, expected) == expected
    for index, host in enumerate(("cmp-0000", "cmp-0001")):
        root = helpers.tree(placement, helpers.generator.stable_uuid(0, host))[host]
        assert root["inventory"]["PCPU"] == 16 and root["inventory"]["VCPU"] == 32
        assert ("COMPUTE_STATUS_DISABLED" in root["traits"]) is (index == 0)
    placement.reset()
    assert set(_statuses(_run(placement, out)).values()) == {"unchanged"}
    assert placement.writes() == []


def _kinds_held(value, seen=None) -> set[type]:
    """The types of every object reachable from ``value`` through dataclass
    fields, named tuples, lists, tuples and dicts."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return set()
    seen.add(id(value))
    kinds = {type(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        children = [getattr(value, field.name) for field in dataclasses.fields(value)]
    elif isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set)):
        children = list(value)
    else:
        children = []
    for child in children:
        kinds |= _kinds_held(child, seen)
    return kinds


@pytest.mark.parametrize("dry_run", [False, True])
def test_results_keep_no_trees_or_simulations(placement, deployment, dry_run):
    """A run keeps a compact record per node: without a ``show`` no tree and no
    simulation survives the node; with the text ``show`` only drawn lines."""
    run = migrate.Migration(placement, load_hosts([deployment]),
                            migrate.Settings(dry_run=dry_run))
    results = run.run()
    assert {r.status for r in results} == {"would-migrate" if dry_run else "migrated",
                                           "skipped"}
    kinds = _kinds_held(results)
    assert not kinds & {ProviderTree, preflight.Simulation, NodePlan}, kinds
    assert all(r.detail is None for r in results) and run.pending == 0
    shown = migrate.Migration(placement, load_hosts([deployment]),
                              migrate.Settings(dry_run=True, show=render.node_text)).run()
    assert not _kinds_held(shown) & {ProviderTree, preflight.Simulation, NodePlan}
    assert all(isinstance(line, str) for r in shown if r.detail for line in r.detail)
    assert any(line.strip() == "after:" for line in shown[0].detail)


def test_a_node_changed_between_check_and_write_fails_with_one_line(placement, raw_placement,
                                                                     deployment):
    """The write phase reads each batch again and plans it again: a node whose
    Placement state no longer matches its description is not written."""
    run = migrate.Migration(placement, load_hosts([deployment]))
    run.check()
    assert not run.refused
    root = helpers.generator.stable_uuid(0, "cmp-0000")
    held = helpers.ok(raw_placement.get(f"/resource_providers/{root}/inventories"))
    held["inventories"]["VGPU"]["total"] += 1
    helpers.ok(raw_placement.put(f"/resource_providers/{root}/inventories", json={
        "inventories": held["inventories"],
        "resource_provider_generation": held["resource_provider_generation"]}))
    placement.reset()
    run.write()
    statuses = _statuses(run.ordered_results())
    assert statuses == {"cmp-0000": "failed", "cmp-0001": "not-run", "cmp-0002": "skipped"}
    error = run.ordered_results()[0].error
    assert error.startswith("NovaException: read again before its write, the node no longer "
                            "passes the check: ") and "\n" not in error, error
    assert placement.writes() == []


@RUNS
def test_providers_outside_the_tree_are_found_for_the_check(migrating, placement,
                                                            raw_placement, deployment):
    """The check looks up providers outside the node's tree (in-process only
    those of its batch): another provider bearing a planned child's name or
    Cyborg's uuid of an accelerator, a consumer's allocations on another
    compute node (named by its root)."""
    from nova_reshape.virt.cyborg import provider_uuid

    helpers.ok(raw_placement.post("/resource_providers", json={
        "name": "cmp-0000_pci_0000_84_00_0"}, microversion="1.20"))
    helpers.ok(raw_placement.post("/resource_providers", json={
        "name": "elsewhere", "uuid": provider_uuid("cmp-0000-fpga-0")}, microversion="1.20"))
    root = helpers.generator.stable_uuid(0, "cmp-0000")
    other = helpers.generator.stable_uuid(0, "cmp-0001")
    held = helpers.ok(raw_placement.get(f"/resource_providers/{root}/allocations"))
    consumer = sorted(held["allocations"])[0]
    body = helpers.ok(raw_placement.get(f"/allocations/{consumer}", microversion="1.28"))
    body["allocations"][other] = {"resources": {"DISK_GB": 1}}
    helpers.ok(raw_placement.put(f"/allocations/{consumer}", json=body, microversion="1.28"))
    run = migrate.Migration(migrating, load_hosts([deployment]), migrate.Settings(batch_size=2))
    results = {result.nodename: result for result in run.run()}
    assert run.refused
    found = {(f.code, f.consumer) for f in results["cmp-0000"].findings}
    assert {("name_taken", None), ("accelerator_conflict", None),
            ("migration_in_progress", consumer)} <= found, found
    elsewhere = [f.message for f in results["cmp-0000"].findings
                 if f.code == "migration_in_progress"]
    assert all("cmp-0001" in message for message in elsewhere), elsewhere
    assert placement.writes() == []


@pytest.fixture
def planned(monkeypatch):
    """The node names :func:`preflight.check_node` planned, in order."""
    names = []
    check_node = preflight.check_node

    def counting(node, *args, **kwargs):
        names.append(node.nodename)
        return check_node(node, *args, **kwargs)

    monkeypatch.setattr(preflight, "check_node", counting)
    return names


@RUNS
def test_a_node_read_as_checked_is_written_without_planning_again(migrating, deployment,
                                                                  planned):
    """The write reads each batch again; a node that reads exactly as its check
    read is written with the plan the check made, not planned a second time."""
    run = migrate.Migration(migrating, load_hosts([deployment]))
    run.check()
    assert {"cmp-0000", "cmp-0001"} <= set(planned)
    planned.clear()
    run.write()
    assert planned == []
    assert _statuses(run.ordered_results()) == {
        "cmp-0000": "migrated", "cmp-0001": "migrated", "cmp-0002": "skipped"}
    assert all(not result.violations for result in run.ordered_results())


@RUNS
def test_a_node_changed_between_check_and_write_is_planned_again(migrating, placement,
                                                                 raw_placement, deployment,
                                                                 planned):
    """A node whose tree moved since its check (here a trait added to its root)
    is planned again from the read before the write, and written as planned
    then; the node that did not move is not planned again."""
    expected = helpers.expected_totals(deployment)
    run = migrate.Migration(migrating, load_hosts([deployment]))
    run.check()
    root = helpers.generator.stable_uuid(0, "cmp-0000")
    raw_placement.put("/traits/CUSTOM_ADDED_MEANWHILE", microversion="1.6")
    held = helpers.ok(raw_placement.get(f"/resource_providers/{root}/traits",
                                        microversion="1.6"))
    helpers.ok(raw_placement.put(f"/resource_providers/{root}/traits", json={
        "traits": [*held["traits"], "CUSTOM_ADDED_MEANWHILE"],
        "resource_provider_generation": held["resource_provider_generation"]},
        microversion="1.6"))
    planned.clear()
    placement.reset()
    run.write()
    assert set(planned) == {"cmp-0000"}  # over the API twice: before and after completing
    assert _statuses(run.ordered_results()) == {
        "cmp-0000": "migrated", "cmp-0001": "migrated", "cmp-0002": "skipped"}
    assert all(not result.violations for result in run.ordered_results())
    assert "CUSTOM_ADDED_MEANWHILE" in helpers.tree(placement, root)["cmp-0000"]["traits"]
    assert helpers.actual_totals(placement, expected) == expected


#: Hosts of the held-descriptions test and its batch size: with four batches a
#: run keeping even one host per batch (or the batch before) goes past the bound.
HELD_HOSTS, BATCH = 7, 2


@pytest.mark.parametrize("dry_run", [False, True])
def test_no_more_than_a_batch_of_host_descriptions_is_held(placement, db_url, tmp_path,
                                                          dry_run):
    out = str(tmp_path / "hosts")
    helpers.generate_rows(db_url, out, HELD_HOSTS, gpus=1, instances=2, kinds=())
    seen = []
    with young_heap():
        hosts = CountingHosts(load_hosts([out]))
        run = migrate.Migration(placement, hosts,
                                migrate.Settings(dry_run=dry_run, batch_size=BATCH),
                                finished=seen.append, keep_results=False)
        assert run.run() == []
    assert len(hosts.alive_when_asked) == HELD_HOSTS
    assert max(hosts.alive_when_asked) <= BATCH
    assert sorted(result.order for result in seen) == list(range(HELD_HOSTS))
    assert {result.status for result in seen} == {
        migrate.WOULD_MIGRATE if dry_run else migrate.MIGRATED}

"""Live explain with ``--nova-database``: HostStates from nova's cell database.

Placement (seeded through the project's schema, answered by its candidate
engine as PlacementDirect serves it) offers every host; nova's cell
database, on the same engine, says which are disabled, forced down or busy
and how much RAM and CPU each really has free. The filters must drop hosts
with nova's reasons and the weighers must weigh nova's figures, not
Placement's.
"""

from __future__ import annotations

import contextlib
import datetime
import json

import pytest

from nova_reshape.novadb.api import read_aggregates
from nova_reshape.novadb.cells import CellsQuery, read_cells
from nova_reshape.novadb.readonly import DatabaseReadError
from nova_reshape.scheduler.cmd import main
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.filters.core import ComputeFilter
from nova_reshape.scheduler.live.explain import run
from nova_reshape.scheduler.live.nova_hosts import NovaDatabaseHostStates, started_numa
from nova_reshape.scheduler.live.placement import from_database
from nova_reshape.scheduler.live.request import LiveRequest
from tests.fixtures import nova_api_db, nova_db
from tests.functional.nova_reshape.scheduler.conftest import placement
from tests.functional.nova_reshape.scheduler.seeding import compute_node, seed

UUIDS = {name: f"a0000000-0000-4000-8000-0000000000{i:02d}"
         for i, name in enumerate(["cmp-a", "cmp-b", "cmp-c", "cmp-d", "cmp-e", "cmp-f",
                                   "cmp-g"], start=1)}
INSTANCE_ON_A = "b0000000-0000-4000-8000-000000000001"
#: On host cmp-a but another node name: nova lists a host's instances by host.
INSTANCE_ON_A_OTHER_NODE = "b0000000-0000-4000-8000-000000000002"
GPU_POOLS = json.dumps(nova_db.envelope("PciDevicePoolList", "1.1", {"objects": [
    nova_db.envelope("PciDevicePool", "1.1", {
        "vendor_id": "10de", "product_id": "20b5", "numa_node": 0, "count": 2,
        "tags": {"dev_type": "type-PCI"}})]}))
REQUEST = LiveRequest(vcpus=2, ram_mb=4096, disk_gb=20, flavor_name="m1.medium")


def _cell_rows(now: datetime.datetime) -> dict:
    """cmp-a/b/f enabled and up, cmp-c disabled, cmp-d forced down; cmp-e is not in
    nova's database and cmp-g has no nova-compute service."""
    def service(row_id, host, **values):
        row = {"id": row_id, "host": host, "binary": "nova-compute", "topic": "compute",
               "disabled": False, "deleted": 0, "version": 66, "created_at": now,
               "last_seen_up": now}
        row.update(values)
        return row

    def node(row_id, name, **values):
        return nova_db.compute_row(row_id, name, name, UUIDS[name], **values)

    return {
        nova_db.services: [
            service(1, "cmp-a"), service(2, "cmp-b"),
            service(3, "cmp-c", disabled=True, disabled_reason="maintenance"),
            service(4, "cmp-d", forced_down=True), service(6, "cmp-f")],
        nova_db.compute_nodes: [
            node(1, "cmp-a", free_ram_mb=30000, vcpus_used=4, pci_stats=GPU_POOLS,
                 stats=json.dumps({"num_instances": "1", "io_workload": "0"})),
            node(2, "cmp-b", free_ram_mb=10000, vcpus_used=12, cpu_allocation_ratio=0.0),
            node(3, "cmp-c", free_ram_mb=60000),
            node(4, "cmp-d", free_ram_mb=60000),
            node(6, "cmp-f", free_ram_mb=60000, stats=json.dumps({"io_workload": "9"})),
            node(7, "cmp-g", free_ram_mb=60000)],
        nova_db.instances: [{
            "id": row_id, "uuid": uuid, "host": "cmp-a", "node": node, "vcpus": 2,
            "memory_mb": 2048, "root_gb": 10, "ephemeral_gb": 0, "vm_state": "active",
            "project_id": "p1", "user_id": "u1", "deleted": 0, "created_at": now}
            for row_id, uuid, node in ((1, INSTANCE_ON_A, "cmp-a"),
                                       (2, INSTANCE_ON_A_OTHER_NODE, "cmp-a-old"))],
    }


@pytest.fixture
def cloud(engine, db_url):
    """(placement URL, nova cell URL): the same seven hosts, all free in Placement."""
    # cmp-a and cmp-b are in the API database's aggregate az1, mirrored in Placement
    seed(db_url, [compute_node(name, uuid=uuid, vcpu=16, memory_mb=65536,
                               aggregates=[nova_api_db.AZ1_UUID]
                               if name in ("cmp-a", "cmp-b") else [])
                  for name, uuid in UUIDS.items()])
    with placement(db_url):  # the app starts on it, as a deployment would
        pass
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)
    with contextlib.contextmanager(nova_db.nova_cell)(
            engine, content=_cell_rows(now)) as cell_url:
        yield db_url, cell_url


def _explain(cloud, config=None):
    placement_url, cell_url = cloud
    source = NovaDatabaseHostStates(cell_url)
    result = run(REQUEST, lambda query: from_database(placement_url, query),
                 SchedulerConfig(config or {}), source)
    return result


def test_filters_drop_hosts_with_novas_reasons(cloud):
    result = _explain(cloud, {"filter_scheduler": {
        "enabled_filters": ["ComputeFilter", "IoOpsFilter"], "max_io_ops_per_host": 8}})
    assert len(result.view.candidate_roots) == 7  # Placement sees nothing wrong
    assert sorted(result.skipped) == [
        "cmp-e: no compute node in nova's database",
        "cmp-g: host cmp-g has no nova-compute service"]
    trace = result.schedule.instances[0]
    assert sorted(host.label for host in trace.candidates) == [
        "cmp-a", "cmp-b", "cmp-c", "cmp-d", "cmp-f"]
    assert trace.reasons() == {
        "cmp-c": "ComputeFilter: compute service is disabled (maintenance)",
        "cmp-d": "ComputeFilter: compute service is forced down",
        "cmp-f": "IoOpsFilter: 9 I/O operations, the maximum is 8"}
    assert sorted(host.label for host in trace.passed) == ["cmp-a", "cmp-b"]
    assert result.to_dict()["dropped_by_filters"]["cmp-c"].startswith("ComputeFilter")


def test_weights_come_from_novas_usage(cloud):
    result = _explain(cloud, {"filter_scheduler": {
        "weight_classes": ["RAMWeigher", "CPUWeigher"]}})
    weighed = {w.host.label: w.scores() for w in result.schedule.instances[0].weighed}
    assert set(weighed) == {"cmp-a", "cmp-b", "cmp-f"}
    # nova's free_ram_mb column, not Placement's 65536 MB free
    assert weighed["cmp-a"]["RAMWeigher"]["raw"] == 30000
    assert weighed["cmp-b"]["RAMWeigher"]["raw"] == 10000
    # 16 vCPUs x 4.0 - 4 used; cmp-b's ratio 0.0 is read as nova's initial 4.0
    assert weighed["cmp-a"]["CPUWeigher"]["raw"] == 60
    assert weighed["cmp-b"]["CPUWeigher"]["raw"] == 52
    assert result.schedule.selected[0].label == "cmp-f"  # most free RAM and CPU


def test_host_state_carries_novas_records(cloud):
    result = _explain(cloud)
    hosts = {host.label: host for host in result.schedule.instances[0].candidates}
    host = hosts["cmp-a"]
    assert list(host.instances) == [INSTANCE_ON_A, INSTANCE_ON_A_OTHER_NODE]
    assert host.num_instances == 1 and host.num_io_ops == 0
    assert host.vcpus_used == 4 and host.total_usable_ram_mb == 131072
    assert host.pci_stats.free_count() == 2
    assert hosts["cmp-c"].service.disabled_reason == "maintenance"


def test_numa_topology_from_the_cell(engine):
    """The fixture cell's cmp-1: two NUMA cells with shared and dedicated CPUs."""
    with contextlib.contextmanager(nova_db.nova_cell)(engine) as cell_url:
        _check_cmp1(NovaDatabaseHostStates(cell_url))


def _check_cmp1(source):
    body = {"allocation_requests": [{"allocations": {nova_db.CMP1_UUID: {
        "resources": {"VCPU": 1}}}}], "provider_summaries": {nova_db.CMP1_UUID: {
            "resources": {}, "root_provider_uuid": nova_db.CMP1_UUID}}}
    (host,) = source.host_states(body, {nova_db.CMP1_UUID: nova_db.CMP1_NODE},
                                 SchedulerConfig())
    cells = host.numa_topology.cells
    assert [(c.id, sorted(c.cpuset), sorted(c.pcpuset)) for c in cells] == [
        (0, [0, 1, 2, 3], [4, 5, 6, 7]), (1, [8, 9, 10, 11], [12, 13, 14, 15])]
    assert host.host == nova_db.CMP1 and host.nodename == nova_db.CMP1_NODE
    assert host.ram_allocation_ratio == 1.5
    assert set(host.instances) >= {nova_db.PINNED, nova_db.SPREAD}


def test_cli_with_nova_database(cloud, capsys):
    placement_url, cell_url = cloud
    status = main(["explain", "--placement-database", placement_url, "--nova-database",
                   cell_url, "--flavor", "m1.medium", "--vcpus", "2", "--ram", "4096",
                   "--disk", "20", "--format", "json"])
    assert status == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dropped_by_filters"] == {
        "cmp-c": "ComputeFilter: compute service is disabled (maintenance)",
        "cmp-d": "ComputeFilter: compute service is forced down"}
    assert len(out["not_hosts"]) == 2
    assert out["selected"] == ["cmp-f"]
    status = main(["explain", "--placement-database", placement_url, "--nova-database",
                   cell_url, "--flavor", "m1.medium", "--vcpus", "2", "--ram", "4096",
                   "--disk", "20"])
    table = capsys.readouterr().out
    assert status == 0
    assert "compute service is disabled (maintenance)" in table
    assert "cmp-e: no compute node in nova's database" in table


def test_unreadable_nova_database_is_one_line(cloud, capsys, tmp_path):
    placement_url, _ = cloud
    status = main(["explain", "--placement-database", placement_url, "--nova-database",
                   f"sqlite:///{tmp_path}/missing.db", "--flavor", "f", "--vcpus", "1",
                   "--ram", "512", "--disk", "1"])
    err = capsys.readouterr().err
    assert status == 2  # a configuration to fix, not a database to wait for
    assert err.count("\n") == 1 and "nova database" in err and "no such file" in err
    assert not (tmp_path / "missing.db").exists()
    with pytest.raises(DatabaseReadError):
        NovaDatabaseHostStates(f"sqlite:///{tmp_path}/missing.db").host_states(
            {"provider_summaries": {}}, {}, SchedulerConfig())


def test_flavor_and_aggregates_from_the_api_database(cloud, engine, capsys):
    placement_url, cell_url = cloud
    with nova_api_db.nova_api(engine) as api_url:
        base = ["explain", "--placement-database", placement_url, "--nova-database",
                cell_url, "--nova-api-database", api_url]
        status = main([*base, "--flavor", "m1.small", "--az", "az1", "--format", "json"])
        out = json.loads(capsys.readouterr().out)
        assert status == 0
        assert {k: out["request"][k] for k in ("flavor", "vcpus", "ram_mb", "disk_gb")} == {
            "flavor": "m1.small", "vcpus": 1, "ram_mb": 2048, "disk_gb": 20}
        step = {s["name"]: s for s in out["request_filters"]}["map_az_to_placement_aggregate"]
        assert step["added"] == {"member_of": [nova_api_db.AZ1_UUID]}
        assert {v["name"]: v["reason"] for v in out["not_candidates"]} == {
            name: "not_member" for name in ("cmp-c", "cmp-d", "cmp-e", "cmp-f", "cmp-g")}
        # cmp-a has more free RAM and CPU in nova's figures, but PCIWeigher keeps its
        # two free GPUs (the cell's pci_stats) for requests that need them
        weighed = {w["host"]: w["weighers"] for w in out["scheduler"]["instances"][0]["weighed"]}
        assert weighed["cmp-a"]["RAMWeigher"]["raw"] == 30000
        assert weighed["cmp-a"]["PCIWeigher"]["raw"] < weighed["cmp-b"]["PCIWeigher"]["raw"]
        assert out["selected"] == ["cmp-b"]

        # the API database without the cell: aggregates and flavor, Placement's figures
        status = main(["explain", "--placement-database", placement_url,
                       "--nova-api-database", api_url, "--flavor", "2", "--az", "az1",
                       "--format", "json"])
        out = json.loads(capsys.readouterr().out)
        assert status == 0 and out["request"]["flavor"] == "m1.small"
        assert sorted(out["scheduler"]["instances"][0]["candidates"]) == ["cmp-a", "cmp-b"]
        assert out["not_hosts"] == [] and out["dropped_by_filters"] == {}

        status = main([*base, "--flavor", "m1.small", "--vcpus", "2"])
        assert status == 2 and "--vcpus: the flavor's own values" in capsys.readouterr().err
        status = main([*base, "--flavor", "m9.huge"])
        err = capsys.readouterr().err
        assert status == 3 and "no flavor named 'm9.huge'" in err and err.count("\n") == 1


def test_aggregates_reach_the_host_states(cloud, engine):
    placement_url, cell_url = cloud
    with nova_api_db.nova_api(engine) as api_url:
        source = NovaDatabaseHostStates(cell_url, read_aggregates(api_url))
        result = run(REQUEST, lambda query: from_database(placement_url, query),
                     SchedulerConfig(), source)
    hosts = {h.label: h for h in result.schedule.instances[0].candidates}
    assert sorted(a.name for a in hosts["cmp-a"].aggregates) == ["az1", "fast"]
    assert hosts["cmp-a"].aggregate_values("availability_zone") == ["az1"]
    assert hosts["cmp-f"].aggregates == []


def test_every_cell_of_the_api_database_is_one_source(engine, tmp_path):
    """The cells as novadb.cells reads them: each node found in its own cell; with
    ``assume_up`` the stopped computes count as up, the disabled one stays disabled."""
    with nova_api_db.nova_cloud(engine) as cloud:
        snapshot = read_cells(CellsQuery(cloud.api_url, cloud.default_connection))
    roots = {nova_db.CMP1_UUID: nova_db.CMP1_NODE, nova_db.CMP2_UUID: nova_db.CMP2_NODE,
             nova_db.CMP3_UUID: nova_db.CMP3_NODE}
    body = {"allocation_requests": [{"allocations": {uuid: {"resources": {"VCPU": 1}}}}
                                    for uuid in roots],
            "provider_summaries": {uuid: {"resources": {}, "root_provider_uuid": uuid}
                                   for uuid in roots}}
    for assume_up in (False, True):
        source = NovaDatabaseHostStates(snapshot, assume_up=assume_up)
        hosts = {h.nodename: h for h in source.host_states(body, roots, SchedulerConfig())}
        assert sorted(hosts) == sorted(roots.values()) and source.skipped() == []
        assert set(hosts[nova_db.CMP3_NODE].instances) == {nova_db.CMP3_GUEST}
        assert nova_db.CMP3_GUEST not in hosts[nova_db.CMP1_NODE].instances
        assert hosts[nova_db.CMP2_NODE].service.disabled
        # the fixture's heartbeats are long past: down unless assumed up
        check = ComputeFilter()
        check.configure(SchedulerConfig())
        passed, _ = check.filter_all(list(hosts.values()), None)
        assert sorted(h.nodename for h in passed) == (
            [nova_db.CMP1_NODE, nova_db.CMP3_NODE] if assume_up else [])


def test_started_numa_splits_each_cell_by_the_cpu_sets():
    stored = {"cells": [{"id": 0, "cpuset": [0, 1, 2, 3], "pcpuset": [0, 1, 2, 3],
                         "memory": 1024},
                        {"id": 1, "cpuset": [4, 5], "pcpuset": [6, 7], "memory": 1024}]}
    both = started_numa(stored, frozenset({0, 1, 4, 5}), frozenset({2, 3, 6, 7}))
    assert [(c["cpuset"], c["pcpuset"]) for c in both["cells"]] == [
        ([0, 1], [2, 3]), ([4, 5], [6, 7])]
    shared_only = started_numa(stored, frozenset(range(8)), None)
    assert [c["pcpuset"] for c in shared_only["cells"]] == [[], []]
    assert started_numa(stored, None, None) == stored
    assert stored["cells"][0]["pcpuset"] == [0, 1, 2, 3]  # the stored cells untouched

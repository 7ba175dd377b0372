"""The migrated node is what nova 34's compute leaves at its first start.

Each test starts from a pre-upgrade tree as an older release left it,
written behind the migration's back, runs the migration, and asserts the
final tree, inventories, traits and every consumer's allocations as nova
34 would leave them; then a second run must find every node ``unchanged``
and write nothing. Runs over HTTP and PlacementDirect on every engine.
"""

from __future__ import annotations

import uuid

import pytest
import yaml

from nova_reshape.compute import migrate
from nova_reshape.virt.host import load_hosts
from nova_reshape.virt.releases import DriverOptions
from tests.functional.nova_reshape import migrate_helpers as helpers

NODE = "cmp-a"
ROOT = "2b0d6c52-6f1e-4b1a-9d0c-000000000001"
PINNED = "c0000000-0000-4000-8000-000000000001"
SHARED = "c0000000-0000-4000-8000-000000000002"
AGGREGATE = "a0000000-0000-4000-8000-000000000001"


def _record(total, **extra):
    return {"total": total, "min_unit": 1, "max_unit": total, "step_size": 1, "reserved": 0,
            "allocation_ratio": 1.0, **extra}


FLAT_CPU = {"VCPU": _record(16, allocation_ratio=4.0), "MEMORY_MB": _record(32768),
            "DISK_GB": _record(500)}


@pytest.fixture
def write_host(tmp_path):
    """Writes the host file for NODE; returns its path."""
    def write(**fields):
        path = tmp_path / "host.yaml"
        node = {"nodename": NODE, "uuid": ROOT, "hypervisor_type": "QEMU", **fields}
        path.write_text(yaml.safe_dump({"host": NODE, "nodes": [node]}))
        return str(path)
    return write


def _root(seed, inventory, traits=("COMPUTE_NODE",), aggregates=()):
    seed.provider(NODE, uuid_=ROOT)
    seed.inventory(ROOT, inventory)
    seed.traits(ROOT, list(traits))
    if aggregates:
        seed.aggregates(ROOT, list(aggregates))


def _run(placement, path, **options):
    return migrate.Migration(placement, load_hosts([path]),
                             migrate.Settings(options=DriverOptions(**options))).run()


def _held(seed, consumer):
    """rp name -> resources the consumer holds."""
    body = seed.consumer(consumer)
    names = {p["uuid"]: p["name"] for p in helpers.ok(seed.placement.get(
        "/resource_providers", microversion="1.14"))["resource_providers"]}
    return {names[rp]: entry["resources"] for rp, entry in body["allocations"].items()}


def _assert_second_run_writes_nothing(placement, path, **options):
    placement.reset()
    results = _run(placement, path, **options)
    assert [(r.status, r.writes) for r in results] == [("unchanged", 0)]
    assert placement.writes() == []


def test_disabled_flag_custom_traits_and_aggregates_are_kept(placement, seed, write_host):
    _root(seed, {**FLAT_CPU, "VGPU": _record(2)},
          traits=("COMPUTE_NODE", "COMPUTE_STATUS_DISABLED", "CUSTOM_GOLD"),
          aggregates=(AGGREGATE,))
    seed.allocate(SHARED, {ROOT: {"VCPU": 2, "MEMORY_MB": 1024, "VGPU": 1}})
    path = write_host(gpus=[{"address": "0000:84:00.0", "capacity": 2}],
                      consumers=[{"uuid": SHARED, "mdevs": [{"gpu": "0000:84:00.0"}]}])
    [result] = _run(placement, path)
    assert result.status == "migrated" and not result.violations
    shape = helpers.tree(placement, ROOT)
    assert shape[NODE]["traits"] == {"COMPUTE_NODE", "COMPUTE_STATUS_DISABLED",
                                     "CUSTOM_GOLD", "OWNER_NOVA"}
    assert helpers.ok(placement.get(f"/resource_providers/{ROOT}/aggregates",
                                    microversion="1.19"))["aggregates"] == [AGGREGATE]
    assert _held(seed, SHARED) == {NODE: {"VCPU": 2, "MEMORY_MB": 1024},
                                   f"{NODE}_pci_0000_84_00_0": {"VGPU": 1}}
    _assert_second_run_writes_nothing(placement, path)


@pytest.mark.parametrize("disabled", [True, False])
def test_disabled_flag_given_is_what_nova_34_sets(placement, seed, write_host, disabled):
    start = {"COMPUTE_NODE", "OWNER_NOVA"} | (set() if disabled else {"COMPUTE_STATUS_DISABLED"})
    _root(seed, FLAT_CPU, traits=sorted(start))
    path = write_host(disabled=disabled)
    [result] = _run(placement, path)
    assert result.status == "updated" and result.writes == 1 and not result.violations
    traits = helpers.tree(placement, ROOT)[NODE]["traits"]
    assert ("COMPUTE_STATUS_DISABLED" in traits) is disabled
    _assert_second_run_writes_nothing(placement, path)


def test_already_migrated_node_costs_no_write_and_no_write_phase_call(placement, seed,
                                                                      write_host):
    _root(seed, FLAT_CPU, traits=("COMPUTE_NODE", "OWNER_NOVA", "COMPUTE_STATUS_DISABLED"))
    path = write_host()
    run = migrate.Migration(placement, load_hosts([path]))
    run.check()
    checked = run.calls
    run.write()
    assert run.calls == checked
    assert [(r.status, r.writes) for r in run.results] == [("unchanged", 0)]


def test_pinned_guests_vcpu_becomes_pcpu(placement, seed, write_host):
    _root(seed, FLAT_CPU)
    seed.allocate(PINNED, {ROOT: {"VCPU": 4, "MEMORY_MB": 4096}})
    seed.allocate(SHARED, {ROOT: {"VCPU": 2, "MEMORY_MB": 2048}})
    path = write_host(cpu_shared_set="0-7", cpu_dedicated_set="8-15,^15",
                      consumers=[{"uuid": PINNED, "cpu_policy": "dedicated"},
                                 {"uuid": SHARED}])
    [result] = _run(placement, path)
    assert result.status == "migrated" and not result.violations
    assert [(m.consumer, m.from_class, m.resource_class, m.amount) for m in result.moves] == [
        (PINNED, "VCPU", "PCPU", 4)]
    inventories = seed.inventories(ROOT)["inventories"]
    assert inventories["VCPU"] == _record(8, allocation_ratio=4.0)
    assert inventories["PCPU"] == _record(7)
    assert set(inventories) == {"VCPU", "PCPU", "MEMORY_MB", "DISK_GB"}
    assert _held(seed, PINNED) == {NODE: {"PCPU": 4, "MEMORY_MB": 4096}}
    assert _held(seed, SHARED) == {NODE: {"VCPU": 2, "MEMORY_MB": 2048}}
    _assert_second_run_writes_nothing(placement, path)


def test_pinned_guests_needing_more_than_the_dedicated_set_are_refused(placement, seed,
                                                                       write_host):
    _root(seed, FLAT_CPU)
    seed.allocate(PINNED, {ROOT: {"VCPU": 6, "MEMORY_MB": 4096}})
    path = write_host(cpu_shared_set="0-7", cpu_dedicated_set="8-11",
                      consumers=[{"uuid": PINNED, "cpu_policy": "dedicated"}])
    placement.reset()
    [result] = _run(placement, path)
    assert result.status == "refused"
    assert [f.code for f in result.findings] == ["pcpu_shortage"]
    assert "6 PCPU" in result.findings[0].message and "4 CPUs" in result.findings[0].message
    assert placement.writes() == []



@pytest.mark.parametrize("cyborg_host,described", [
    (NODE, {"name": f"{NODE}_0000:5e:00.0"}),          # by Cyborg's own name
    ("cmp-a.example.org", {}),                          # by address only
])
def test_existing_cyborg_provider_is_used_never_duplicated(placement, seed, write_host,
                                                           cyborg_host, described):
    _root(seed, FLAT_CPU, traits=("COMPUTE_NODE", "OWNER_NOVA"))
    name = f"{cyborg_host}_0000:5e:00.0"
    fpga = seed.provider(name, parent=ROOT, uuid_=str(uuid.uuid3(uuid.NAMESPACE_DNS, name)))
    seed.inventory(fpga, {"FPGA": {"total": 2, "max_unit": 2}})
    seed.traits(fpga, ["OWNER_CYBORG"])
    seed.allocate(SHARED, {ROOT: {"VCPU": 2}, fpga: {"FPGA": 1}})
    path = write_host(accelerators=[{"type": "FPGA", "address": "0000:5E:00.0",
                                     "capacity": 2, **described}],
                      consumers=[{"uuid": SHARED,
                                  "accelerators": [{"device": "0000:5e:00.0"}]}])
    placement.reset()
    [result] = _run(placement, path)
    assert (result.status, result.writes, result.findings) == ("unchanged", 0, [])
    assert set(helpers.tree(placement, ROOT)) == {NODE, name}
    assert _held(seed, SHARED) == {NODE: {"VCPU": 2}, name: {"FPGA": 1}}


def test_two_cyborg_providers_for_one_device_are_refused(placement, seed, write_host):
    _root(seed, FLAT_CPU, traits=("COMPUTE_NODE", "OWNER_NOVA"))
    for host in ("cmp-a.example.org", "cmp-a.old"):
        rp = seed.provider(f"{host}_0000:5e:00.0", parent=ROOT)
        seed.inventory(rp, {"FPGA": {"total": 2, "max_unit": 2}})
        seed.traits(rp, ["OWNER_CYBORG"])
    path = write_host(accelerators=[{"type": "FPGA", "address": "0000:5e:00.0",
                                     "capacity": 2}])
    placement.reset()
    [result] = _run(placement, path)
    assert result.status == "refused" and placement.writes() == []
    assert [f.code for f in result.findings] == ["accelerator_conflict"]


def test_vgpu_mismatch_refused_by_default_and_moved_as_nova_does_when_allowed(
        placement, seed, write_host):
    _root(seed, {**FLAT_CPU, "VGPU": _record(4)}, traits=("COMPUTE_NODE", "OWNER_NOVA"))
    seed.allocate(SHARED, {ROOT: {"VCPU": 2, "VGPU": 2}})  # two VGPUs, one mdev
    path = write_host(gpus=[{"address": "0000:84:00.0", "capacity": 4}],
                      consumers=[{"uuid": SHARED, "mdevs": [{"gpu": "0000:84:00.0"}]}])
    placement.reset()
    [refused] = _run(placement, path)
    assert refused.status == "refused" and placement.writes() == []
    assert [f.code for f in refused.findings] == ["amount_mismatch"]
    [result] = _run(placement, path, allow_vgpu_mismatch=True)
    assert result.status == "migrated" and not result.violations
    assert sorted((m.resource_class, m.amount, m.created) for m in result.moves) == [
        ("VGPU", -1, True), ("VGPU", 1, False)]
    assert _held(seed, SHARED) == {NODE: {"VCPU": 2}, f"{NODE}_pci_0000_84_00_0": {"VGPU": 1}}
    _assert_second_run_writes_nothing(placement, path, allow_vgpu_mismatch=True)


def _all_in_one(seed, write_host):
    """VGPU on the root, PCI not in Placement, a pinned guest on VCPU with a dedicated
    set, NUMA cells described, Cyborg's provider already there, a disabled compute."""
    _root(seed, {**FLAT_CPU, "VGPU": _record(4)}, traits=("COMPUTE_NODE", "CUSTOM_GOLD"),
          aggregates=(AGGREGATE,))
    fpga_name = "cmp-a.example.org_0000:5e:00.0"
    fpga = seed.provider(fpga_name, parent=ROOT,
                         uuid_=str(uuid.uuid3(uuid.NAMESPACE_DNS, fpga_name)))
    seed.inventory(fpga, {"FPGA": {"total": 2, "max_unit": 2}})
    seed.traits(fpga, ["OWNER_CYBORG"])
    seed.allocate(PINNED, {ROOT: {"VCPU": 4, "MEMORY_MB": 4096, "VGPU": 1}})
    seed.allocate(SHARED, {ROOT: {"VCPU": 2, "MEMORY_MB": 2048, "VGPU": 1}, fpga: {"FPGA": 1}})
    path = write_host(
        disabled=True, cpu_shared_set="0-7", cpu_dedicated_set="8-11",
        gpus=[{"address": "0000:84:00.0", "capacity": 2},
              {"address": "0000:85:00.0", "capacity": 2}],
        numa_cells=[{"id": 0, "cpus": "0-3", "pcpus": "8-9", "memory_mb": 16384},
                    {"id": 1, "cpus": "4-7", "pcpus": "10-11", "memory_mb": 16384}],
        pci_devices=[{"address": "0000:d8:00.0", "vendor_id": "10de", "product_id": "20b5"}],
        accelerators=[{"type": "FPGA", "address": "0000:5e:00.0", "capacity": 2}],
        consumers=[
            {"uuid": PINNED, "cpu_policy": "dedicated", "numa": [0],
             "mdevs": [{"gpu": "0000:84:00.0"}], "pci": ["0000:d8:00.0"]},
            {"uuid": SHARED, "numa": [1], "mdevs": [{"gpu": "0000:85:00.0"}],
             "accelerators": [{"device": "0000:5e:00.0"}]}])
    return path, fpga_name


def test_all_cases_on_one_node_and_the_dry_run_plan_is_what_is_written(placement, seed,
                                                                       write_host):
    path, fpga_name = _all_in_one(seed, write_host)
    placement.reset()
    [dry] = migrate.Migration(placement, load_hosts([path]), migrate.Settings(
        dry_run=True, show=helpers.shown_simulation)).run()
    assert dry.status == "would-migrate" and placement.writes() == []
    plan = dry.detail.plan

    [result] = _run(placement, path)
    assert result.status == "migrated" and not result.violations
    shape = helpers.tree(placement, ROOT)
    vgpu84, vgpu85, gpu = (f"{NODE}_pci_0000_84_00_0", f"{NODE}_pci_0000_85_00_0",
                           f"{NODE}_0000:D8:00.0")
    assert {name: (data["parent"], data["inventory"], data["traits"])
            for name, data in shape.items()} == {
        NODE: (None, {"VCPU": 8, "PCPU": 4, "MEMORY_MB": 32768, "DISK_GB": 500},
               {"COMPUTE_NODE", "CUSTOM_GOLD", "OWNER_NOVA", "COMPUTE_STATUS_DISABLED"}),
        vgpu84: (NODE, {"VGPU": 2}, {"OWNER_NOVA"}),
        vgpu85: (NODE, {"VGPU": 2}, {"OWNER_NOVA"}),
        gpu: (NODE, {"CUSTOM_PCI_10DE_20B5": 1}, {"COMPUTE_MANAGED_PCI_DEVICE", "OWNER_NOVA"}),
        fpga_name: (NODE, {"FPGA": 2}, {"OWNER_CYBORG"}),
    }
    assert helpers.ok(placement.get(f"/resource_providers/{ROOT}/aggregates",
                                    microversion="1.19"))["aggregates"] == [AGGREGATE]
    assert _held(seed, PINNED) == {NODE: {"PCPU": 4, "MEMORY_MB": 4096}, vgpu84: {"VGPU": 1},
                                   gpu: {"CUSTOM_PCI_10DE_20B5": 1}}
    assert _held(seed, SHARED) == {NODE: {"VCPU": 2, "MEMORY_MB": 2048}, vgpu85: {"VGPU": 1},
                                   fpga_name: {"FPGA": 1}}
    assert helpers.over_capacity(placement, ROOT) == []

    # The dry run's plan is what was written: providers, uuids, inventories,
    # traits and every changed consumer's allocations.
    assert {(p.name, p.uuid, p.parent_uuid) for p in plan.create} == {
        (name, shape[name]["uuid"], ROOT) for name in (vgpu84, vgpu85, gpu)}
    assert {shape[name]["uuid"] for name in (vgpu84, vgpu85, gpu)} == {
        str(uuid.uuid5(uuid.UUID(ROOT), name)) for name in (vgpu84, vgpu85, gpu)}
    names = {data["uuid"]: name for name, data in shape.items()}
    for rp, traits in plan.traits.items():
        assert set(traits) == shape[names[rp]]["traits"]
    for rp, inventory in plan.inventories.items():
        assert {rc: r["total"] for rc, r in inventory.items()} == shape[names[rp]]["inventory"]
    assert set(plan.allocations) == {PINNED, SHARED}
    for consumer, body in plan.allocations.items():
        assert {names[rp]: entry["resources"] for rp, entry in body["allocations"].items()
                } == _held(seed, consumer)
    _assert_second_run_writes_nothing(placement, path)

"""Devices that belong to Neutron, in the one-step migration from nova's database.

On every enabled engine: SR-IOV VFs whose ``physical_network`` comes from
nova's pool tags only, from nova.conf's ``[pci] device_spec`` only, or from
both, held by an instance through a port, get no Placement provider; the
instance's allocations on the root and on Neutron's bandwidth provider are
left as they were; Neutron's agent providers under the compute root are
kept; the dry run lists the devices as "left to Neutron". ``remote_managed``
VFs without a physical network are nova's, as in nova 34: they get their
PF's provider, and the same instance, holding one through a second port (or a
flavor alias), gets its allocation there (what nova-compute's start-up would
heal). A second run is "unchanged" with zero writes. nova.conf and the pool tags
disagreeing is a ``source_conflict``.
"""

from __future__ import annotations

import json

import pytest

from nova_reshape.cmd import manage
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import nova_db as fx
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape import migrate_helpers as helpers
from tests.functional.nova_reshape.cmd.test_from_nova import (
    described,
    flat_placement,
    nova_cell,
    run,
    state,
)

RM_PARENT, RM_HELD, RM_FREE = "0000:af:00.0", "0000:af:00.2", "0000:af:00.3"
RM_PORT_REQUEST = "30000000-0000-4000-8000-000000000002"
AGENT = f"{fx.CMP1_NODE}:NIC Switch agent"
BRIDGE = f"{AGENT}:ens5f0"
AGENT_UUID = "50000000-0000-4000-8000-000000000001"
BRIDGE_UUID = "50000000-0000-4000-8000-000000000002"
RM_PROVIDER = f"{fx.CMP1_NODE}_{RM_PARENT.upper()}"
LEFT_TO_NEUTRON = (f"left to Neutron: {fx.VF_HELD} (type-VF, physical_network physnet1); "
                   f"{fx.VF_FREE} (type-VF, physical_network physnet1)\n")


def pool(vendor, product, count, **tags):
    return fx.envelope("PciDevicePool", "1.1", {
        "vendor_id": vendor, "product_id": product, "numa_node": 0, "count": count,
        "tags": tags})


def pci_stats(physnet_tag=True):
    """cmp-1's pools as nova 26+ records them: split per device or PF, free devices only."""
    vf_tags = {"physical_network": "physnet1"} if physnet_tag else {}
    return json.dumps(fx.envelope("PciDevicePoolList", "1.1", {"objects": [
        pool("10de", "20b5", 1, dev_type="type-PCI", address=fx.GPU_FREE),
        pool("8086", "154c", 1, dev_type="type-VF", address=fx.VF_PARENT,
             remote_managed="false", **vf_tags),
        pool("15b3", "101e", 1, dev_type="type-VF", address=RM_PARENT,
             remote_managed="true")]}))


def content(pools, holder="port"):
    """The fixture cell plus remote-managed VFs, one held by UNPINNED_VF through a
    second port (``holder`` "alias": through a flavor alias instead); ``pools``:
    cmp-1's pci_stats (None: not recorded)."""
    rows = fx.rows()
    nodes = rows[fx.compute_nodes]
    nodes[0] = {**nodes[0], "pci_stats": pools}
    requests = json.dumps([
        {"count": 1, "spec": [{"physical_network": "physnet1"}], "alias_name": None,
         "request_id": fx.VF_PORT_REQUEST, "requester_id": "port-1"},
        {"count": 1, "spec": [{"remote_managed": "True"}], "request_id": RM_PORT_REQUEST,
         **({"alias_name": None, "requester_id": "port-2"} if holder == "port"
            else {"alias_name": "dpu-vf"})}])
    extras = rows[fx.instance_extra]
    extras[1] = {**extras[1], "pci_requests": requests}
    rows[fx.pci_devices] = [
        *rows[fx.pci_devices],
        fx.device_row(6, 1, RM_HELD, "15b3", "101e", "type-VF", "allocated", fx.UNPINNED_VF,
                      parent=RM_PARENT, request_id=RM_PORT_REQUEST),
        fx.device_row(7, 1, RM_FREE, "15b3", "101e", "type-VF", parent=RM_PARENT)]
    return rows


def nova_conf(path, physnet_tag=True):
    vf_spec = ', "physical_network": "physnet1"' if physnet_tag else ""
    path.write_text(
        "[pci]\nreport_in_placement = True\n"
        'device_spec = {"vendor_id": "10de", "product_id": "20b5"}\n'
        f'device_spec = {{"vendor_id": "8086", "product_id": "154c"{vf_spec}}}\n'
        'device_spec = {"vendor_id": "15b3", "product_id": "101e", '
        '"remote_managed": "true"}\n')
    return str(path)


def add_neutron_providers(url):
    """The SR-IOV agent's providers under cmp-1 (packet rate, bandwidth), and
    UNPINNED_VF's port allocation reaching into the bandwidth provider."""
    with PlacementDirect(make_conf(url)) as placement:
        for uuid, name, parent in ((AGENT_UUID, AGENT, fx.CMP1_UUID),
                                   (BRIDGE_UUID, BRIDGE, AGENT_UUID)):
            helpers.ok(placement.post("/resource_providers", json={
                "uuid": uuid, "name": name, "parent_provider_uuid": parent},
                microversion="1.20"))
        for uuid, inventory in ((AGENT_UUID, {"NET_PACKET_RATE_KILOPACKET_PER_SEC":
                                              {"total": 1000}}),
                                (BRIDGE_UUID, {"NET_BW_EGR_KILOBIT_PER_SEC": {"total": 10000},
                                               "NET_BW_IGR_KILOBIT_PER_SEC": {"total": 10000}})):
            helpers.ok(placement.put(f"/resource_providers/{uuid}/inventories", json={
                "resource_provider_generation": 0, "inventories": inventory}))
        for trait in ("CUSTOM_PHYSNET_PHYSNET1", "CUSTOM_VNIC_TYPE_DIRECT"):
            helpers.ok(placement.put(f"/traits/{trait}", microversion="1.6"))
        helpers.ok(placement.put(f"/resource_providers/{BRIDGE_UUID}/traits", json={
            "resource_provider_generation": 1,
            "traits": ["CUSTOM_PHYSNET_PHYSNET1", "CUSTOM_VNIC_TYPE_DIRECT"]},
            microversion="1.6"))
        held = helpers.ok(placement.get(f"/allocations/{fx.UNPINNED_VF}", microversion="1.28"))
        allocations = {rp: {"resources": entry["resources"]}
                       for rp, entry in held["allocations"].items()}
        allocations[BRIDGE_UUID] = {"resources": {"NET_BW_EGR_KILOBIT_PER_SEC": 1000}}
        helpers.ok(placement.put(f"/allocations/{fx.UNPINNED_VF}", json={
            "allocations": allocations, "project_id": held["project_id"],
            "user_id": held["user_id"], "consumer_generation": held["consumer_generation"]},
            microversion="1.28"))


@pytest.mark.parametrize(("source", "holder"), [
    ("pool_tags", "port"), ("device_spec", "port"), ("both", "port"), ("both", "alias")])
def test_physnet_devices_get_no_provider_remote_managed_ones_do(engine, tmp_path, source,
                                                                holder):
    pools = pci_stats() if source != "device_spec" else None
    conf_args = ("--nova-config", nova_conf(tmp_path / "nova.conf")) \
        if source != "pool_tags" else ()
    with nova_cell(engine, content=content(pools, holder)) as nova_url:
        documents = described(nova_url, tmp_path / "hosts")
        url, conf = flat_placement(engine, documents, tmp_path / "placement")
        add_neutron_providers(url)
        consumers = [fx.PINNED, fx.UNPINNED_VF]
        trees_before, allocations_before = state(url, consumers)
        migrate = ("--config-file", conf, "placement", "migrate_compute_inventory",
                   "--nova-database", nova_url, *conf_args)
        code, text, err = run(*migrate, "--dry-run")
        assert code == 0, text + err
        assert LEFT_TO_NEUTRON in text
        code, text, err = run(*migrate)
        assert code == 0, text + err
        assert "cmp-1.example.org: migrated" in text
        trees, allocations = state(url, consumers)
        code, again, err = run(*migrate, "--format", "json")
    assert code == 0, again + err
    assert not [name for name in trees if "0000:3B:00" in name]
    assert trees[f"{fx.CMP1_NODE}_0000:D8:00.0"]["inventory"] == {"CUSTOM_PCI_10DE_20B5": 1}
    assert trees[RM_PROVIDER]["inventory"] == {"CUSTOM_PCI_15B3_101E": 2}
    for name in (AGENT, BRIDGE):
        assert trees[name] == trees_before[name]
    assert RM_PROVIDER not in allocations_before[fx.UNPINNED_VF]
    assert allocations[fx.UNPINNED_VF] == {**allocations_before[fx.UNPINNED_VF],
                                           RM_PROVIDER: {"CUSTOM_PCI_15B3_101E": 1}}
    assert allocations[fx.UNPINNED_VF][BRIDGE] == {"NET_BW_EGR_KILOBIT_PER_SEC": 1000}
    assert allocations[fx.PINNED] != allocations_before[fx.PINNED]  # the GPU moved
    report = json.loads(again)
    assert {node["status"] for node in report["nodes"]} == {"unchanged", "skipped"}
    assert [node["writes"] for node in report["nodes"]] == [0, 0, 0]
    cmp1 = next(node for node in report["nodes"] if node["nodename"] == fx.CMP1_NODE)
    assert len(cmp1["left_to_neutron"]) == 2


def test_device_spec_and_pool_tags_disagreeing_is_a_source_conflict(engine, tmp_path):
    conf_file = nova_conf(tmp_path / "nova.conf")
    with nova_cell(engine, content=content(pci_stats(physnet_tag=False))) as nova_url:
        url, conf = flat_placement(engine, [], tmp_path)
        code, text, err = run("--config-file", conf, "placement",
                              "migrate_compute_inventory", "--nova-database", nova_url,
                              "--nova-config", conf_file)
    assert code == manage.EXIT_REFUSED, text + err
    conflicts = [line for line in text.splitlines() if "[source_conflict]" in line]
    assert conflicts == [
        f"cmp-1.example.org: [source_conflict] PCI device {address}: its [pci] device_spec "
        "entry says physical_network physnet1 but its pool in nova's database "
        "(compute_nodes.pci_stats) says no neutron tag: which of them is Neutron's is "
        f"unknown. Fix: {conflicts[0].split('. Fix: ')[1]}"
        for address in (fx.VF_HELD, fx.VF_FREE)]
    assert text.splitlines()[-1].startswith("refused: 2 conflict(s)")
    with PlacementDirect(make_conf(url)) as placement:
        assert helpers.ok(placement.get("/resource_providers"))["resource_providers"] == []

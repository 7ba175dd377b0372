"""nova's serialized PCI requests, PCI devices and pools, and flavors (novadb/devices.py)."""

from __future__ import annotations

import json

from nova_reshape.nova.flavor import CpuPolicy
from nova_reshape.nova.pci import NeutronTags, PciDevice, PciDevicePool, PciDeviceType
from nova_reshape.novadb import objects
from nova_reshape.novadb.devices import pool_neutron_tags
from tests.fixtures.nova_db import envelope


def test_pci_requests_plain_list_as_nova_writes_it():
    text = json.dumps([
        {"count": 1, "spec": [{"vendor_id": "10de", "product_id": "20b5"}],
         "alias_name": "a100", "is_new": False, "numa_policy": "legacy",
         "request_id": None, "requester_id": None},
        {"count": 1, "spec": [{"physical_network": "physnet1"}], "alias_name": None,
         "is_new": False, "request_id": "0f0e0d0c-0000-4000-8000-000000000009",
         "requester_id": "port-1"}])
    first, second = objects.parse_pci_requests(text)
    assert first.count == 1 and first.alias_name == "a100" and not first.from_neutron_port
    assert first.spec[0]["product_id"] == "20b5" and first.numa_policy == "legacy"
    assert second.from_neutron_port and second.requester_id == "port-1"
    assert second.numa_policy is None


def test_pci_requests_envelope_is_accepted():
    request = envelope("InstancePCIRequest", "1.1", {
        "count": 2, "spec": [{"vendor_id": "8086"}], "alias_name": "nic", "is_new": False,
        "request_id": None})
    text = json.dumps(envelope("InstancePCIRequests", "1.1", {
        "instance_uuid": "6d3c2e9a-0000-4000-8000-000000000001", "requests": [request]}))
    (parsed,) = objects.parse_pci_requests(text)
    assert parsed.count == 2 and parsed.alias_name == "nic"


def flavor(flavorid: str, vcpus: int, extra_specs: dict, version: str = "1.2") -> dict:
    return envelope("Flavor", version, {
        "id": 3, "name": f"f-{flavorid}", "memory_mb": 4096, "vcpus": vcpus, "root_gb": 20,
        "ephemeral_gb": 0, "flavorid": flavorid, "swap": 0, "rxtx_factor": 1.0,
        "vcpu_weight": 0, "disabled": False, "is_public": True, "extra_specs": extra_specs,
        "description": None})


def test_flavor_info_current_old_and_new():
    text = json.dumps({"cur": flavor("p4", 4, {"hw:cpu_policy": "dedicated",
                                               "resources:VGPU": "1"}),
                       "old": flavor("s2", 2, {}, version="1.1"), "new": None})
    info = objects.parse_flavor_info(text)
    assert info.cur.vcpus == 4 and info.cur.cpu_policy is CpuPolicy.DEDICATED
    assert info.cur.extra_specs["resources:VGPU"] == "1"
    assert info.old.flavorid == "s2" and info.old.cpu_policy is None and info.new is None


def test_pci_device_envelope():
    device = envelope("PciDevice", "1.7", {
        "id": 5, "uuid": "4f4a1b7e-0000-4000-8000-000000000005", "compute_node_id": 1,
        "address": "0000:3b:00.2", "vendor_id": "8086", "product_id": "154c",
        "dev_type": "type-VF", "status": "allocated", "dev_id": "pci_0000_3b_00_2",
        "label": "label_8086_154c", "instance_uuid": "6d3c2e9a-0000-4000-8000-000000000001",
        "request_id": None, "extra_info": {"capabilities": "{}"}, "numa_node": 0,
        "parent_addr": "0000:3b:00.0"})
    parsed = objects.parse_pci_device(device)
    assert parsed.dev_type == PciDeviceType.VF.value
    assert parsed.parent_addr == "0000:3b:00.0" and parsed.numa_node == 0 and parsed.held
    assert parsed.extra_info == {"capabilities": "{}"}


def test_pci_device_1_2_has_no_numa_node_or_parent():
    device = envelope("PciDevice", "1.2", {
        "id": 5, "compute_node_id": 1, "address": "0000:84:00.0", "vendor_id": "10de",
        "product_id": "1db4", "dev_type": "type-PCI", "status": "available", "dev_id": None,
        "label": "label_10de_1db4", "instance_uuid": None, "request_id": None,
        "extra_info": {}})
    parsed = objects.parse_pci_device(device)
    assert parsed.numa_node is None and parsed.parent_addr is None and not parsed.held


def test_extra_info_json():
    assert objects.parse_extra_info('{"capabilities": {"network": ["rx"]}}') == {
        "capabilities": '{"network": ["rx"]}'}
    assert objects.parse_extra_info(None) == {}


def test_pci_pools_as_the_resource_tracker_stores_them():
    text = json.dumps(envelope("PciDevicePoolList", "1.1", {"objects": [
        envelope("PciDevicePool", "1.1", {
            "vendor_id": "8086", "product_id": "154c", "numa_node": 1, "count": 7,
            "tags": {"dev_type": "type-VF", "physical_network": "physnet1"}})]}))
    (pool,) = objects.parse_pci_pools(text)
    assert (pool.vendor_id, pool.product_id, pool.numa_node, pool.count) == (
        "8086", "154c", 1, 7)
    assert pool.tags == {"dev_type": "type-VF", "physical_network": "physnet1"}
    assert objects.parse_pci_pools(None) == ()


VF = PciDevice(compute_node_id=1, address="0000:3b:00.2", vendor_id="8086", product_id="154c",
               dev_type="type-VF", status="available", parent_addr="0000:3b:00.0", numa_node=0,
               extra_info={"parent_ifname": "ens1f0"})


def vf_pool(**tags):
    return PciDevicePool("8086", "154C", 4, numa_node=0, tags={"dev_type": "type-VF", **tags})


def test_a_pool_holds_devices_alike_in_what_it_records():
    assert vf_pool(address="0000:3B:00.0", parent_ifname="ens1f0").may_hold(VF)
    assert vf_pool().may_hold(VF)  # pools of releases before nova 26 name no PF
    assert not vf_pool(address="0000:3b:00.1").may_hold(VF)
    assert not vf_pool(parent_ifname="ens1f1").may_hold(VF)
    assert not vf_pool(dev_type="type-PF").may_hold(VF)
    assert not PciDevicePool("8086", "154c", 1, numa_node=1).may_hold(VF)
    assert not PciDevicePool("8086", "1572", 1).may_hold(VF)


def test_the_pools_tags_say_whether_the_device_is_neutrons():
    pools = (vf_pool(address="0000:3b:00.0", physical_network="physnet1"),
             vf_pool(address="0000:5e:00.0", remote_managed="true"))
    assert pool_neutron_tags(VF, pools) == NeutronTags("physnet1")
    assert pool_neutron_tags(VF, (vf_pool(remote_managed="false"),)) == NeutronTags()
    remote_managed = pool_neutron_tags(VF, (vf_pool(remote_managed="true"),))
    assert remote_managed == NeutronTags(remote_managed=True)
    assert not remote_managed.belong_to_neutron  # recorded, but the device is nova's


def test_no_pool_or_pools_that_disagree_say_nothing():
    assert pool_neutron_tags(VF, ()) is None
    assert pool_neutron_tags(VF, (vf_pool(physical_network="physnet1"),
                                  vf_pool(physical_network="physnet2"))) is None

"""Where the sources of a host description disagree (hostfacts/conflicts.py)."""

from __future__ import annotations

from nova_reshape.hostfacts.collected import CollectedGpu, CollectedHost, CollectedMdev
from nova_reshape.hostfacts.conflicts import conflicts
from nova_reshape.nova.flavor import Flavor, FlavorInfo
from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.nova.pci import PciDevice
from nova_reshape.novadb.records import CellSnapshot, ComputeNodeRecord

HOST, NODE = "cmp-1", "cmp-1.example.org"
VGPU_GUEST = "10000000-0000-4000-8000-000000000001"
STRANGER = "10000000-0000-4000-8000-000000000009"
GPU = "0000:84:00.0"


def node(node_id: int, name: str, hypervisor_type: str = "QEMU") -> ComputeNodeRecord:
    return ComputeNodeRecord(id=node_id, uuid=f"u{node_id}", host=HOST,
                             hypervisor_hostname=name, hypervisor_type=hypervisor_type,
                             vcpus=8, memory_mb=4096, local_gb=10)


def snapshot(*nodes: ComputeNodeRecord, devices=()) -> CellSnapshot:
    vgpu = FlavorInfo(Flavor("v1", "v1", 2, 2048, extra_specs={"resources:VGPU": "1"}))
    return CellSnapshot(compute_nodes=nodes, services={}, pci_devices=tuple(devices),
                        instances=(InstanceRecord(VGPU_GUEST, HOST, NODE, flavor=vgpu),),
                        migrations=())


def document(**entry) -> dict:
    return {"nodes": [{"nodename": NODE, **entry}]}


def test_agreeing_sources_have_no_conflict():
    mdevs = [{"uuid": "m1", "gpu": GPU}]
    assert list(conflicts(snapshot(node(1, NODE)), HOST,
                          document(consumers=[{"uuid": VGPU_GUEST, "mdevs": mdevs}]),
                          None)) == []


def test_pinned_guest_without_dedicated_set_and_vgpu_guest_without_mdev():
    pinned = {"uuid": "p1", "cpu_policy": "dedicated"}
    found = list(conflicts(snapshot(node(1, NODE)), HOST, document(consumers=[pinned]), None))
    assert found == [
        (NODE, "pinned guest(s) p1 but neither nova's database nor nova.conf gives the host "
               "a dedicated CPU set ([compute] cpu_dedicated_set)"),
        (NODE, f"instance {VGPU_GUEST} asks resources:VGPU but no collected file of the host "
               "(host collect) gives it no mediated device")]
    assert list(conflicts(snapshot(node(1, NODE)), HOST, document(
        consumers=[pinned, {"uuid": VGPU_GUEST, "mdevs": [{}]}], cpu_dedicated_set="4-7"),
        None)) == []


def test_collected_file_against_the_database():
    passthrough = PciDevice(compute_node_id=1, address=GPU, vendor_id="10de",
                            product_id="20b5", dev_type="type-PCI", status="available")
    collected = CollectedHost(HOST, gpus=(CollectedGpu(GPU),),
                              mdevs=(CollectedMdev("m9", GPU, instance=STRANGER),),
                              errors=("virsh failed",), path="c/cmp-1.yaml")
    entry = document(consumers=[{"uuid": VGPU_GUEST, "mdevs": [{}]}])
    messages = [message for _, message in conflicts(
        snapshot(node(1, NODE), devices=[passthrough]), HOST, entry, collected)]
    assert messages == [
        "c/cmp-1.yaml: host collect could not read everything: virsh failed",
        f"PCI device {GPU} is a type-PCI passthrough device in nova's database but a GPU "
        "for mediated devices in c/cmp-1.yaml",
        f"c/cmp-1.yaml: domain {STRANGER} holds mediated device m9 but nova has no "
        "instance of that uuid on this node"]


def test_a_collected_file_for_a_host_with_two_nodes_is_ambiguous_ironic_is_skipped():
    two = snapshot(node(1, NODE), node(2, "cmp-1b"), node(3, "bm-1", "ironic"))
    collected = CollectedHost(HOST, path="c/cmp-1.yaml")
    found = list(conflicts(two, HOST, {"nodes": [
        {"nodename": NODE, "consumers": [{"uuid": VGPU_GUEST, "mdevs": [{}]}]},
        {"nodename": "bm-1"}]}, collected))
    assert [name for name, _ in found] == [NODE, "cmp-1b"]
    assert "has 2 non-ironic nodes on it" in found[0][1]

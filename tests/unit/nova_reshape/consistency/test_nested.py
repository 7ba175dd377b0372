"""--heal-nested: request groups and held devices placed on the providers of a node's tree."""

from __future__ import annotations

from nova_reshape.consistency import nested
from nova_reshape.consistency.resources import flavor_request
from nova_reshape.nova.pci import PciDevice
from tests.unit.nova_reshape.consistency.helpers import instance

ROOT, GPU1, GPU2, PF = "root", "gpu-1", "gpu-2", "pf"


def tree(gpu1_used=0):
    inventory = {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 8192},
                 "DISK_GB": {"total": 100}}
    return nested.TreeView(
        ROOT, [{"uuid": ROOT, "name": "n1"}, {"uuid": GPU1, "name": "n1_pci_0000_81_00_0"},
               {"uuid": GPU2, "name": "n1_pci_0000_82_00_0"},
               {"uuid": PF, "name": "n1_0000:3B:00.0"}],
        {ROOT: inventory, GPU1: {"VGPU": {"total": 2, "max_unit": 2}},
         GPU2: {"VGPU": {"total": 2, "max_unit": 2}},
         PF: {"CUSTOM_PCI_8086_154C": {"total": 4}}},
        {GPU1: {"VGPU": gpu1_used}})


def request(**specs):
    return flavor_request(instance("a", specs=specs), volume_backed=False)


def test_classes_the_root_lacks_go_to_the_first_child_with_room():
    view = tree(gpu1_used=2)
    placed = nested.place(request(**{"resources:VGPU": "1"}), view, "n1")
    assert placed == {ROOT: {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 5}, GPU2: {"VGPU": 1}}
    assert view.usages[GPU2] == {"VGPU": 1} and view.usages[ROOT]["VCPU"] == 2


def test_numbered_groups_each_take_one_provider_counting_the_previous():
    placed = nested.place(request(**{"resources1:VGPU": "2", "resources2:VGPU": "2"}),
                          tree(), "n1")
    assert placed[GPU1] == {"VGPU": 2} and placed[GPU2] == {"VGPU": 2}


def test_nowhere_to_go_stays_on_the_root_for_placement_to_refuse():
    placed = nested.place(request(**{"resources:CUSTOM_X": "1"}), tree(), "n1")
    assert placed[ROOT]["CUSTOM_X"] == 1


def test_held_devices_count_on_their_provider_a_vf_on_its_parent():
    vf = PciDevice(compute_node_id=1, address="0000:3b:00.2", vendor_id="8086",
                   product_id="154c", dev_type="type-VF", status="allocated",
                   instance_uuid="a", parent_addr="0000:3b:00.0")
    unknown = PciDevice(compute_node_id=1, address="0000:99:00.0", vendor_id="8086",
                        product_id="0001", dev_type="type-PCI", status="allocated",
                        instance_uuid="a")
    placed = nested.place(request(), tree(), "n1", [vf, vf, unknown])
    assert placed[PF] == {"CUSTOM_PCI_8086_154C": 2} and set(placed) == {ROOT, PF}


def test_room_honours_reserved_ratio_and_max_unit():
    view = nested.TreeView(ROOT, [{"uuid": ROOT, "name": "n"}], {ROOT: {"VCPU": {
        "total": 4, "reserved": 1, "allocation_ratio": 2.0, "max_unit": 3}}}, {ROOT: {"VCPU": 2}})
    assert view.room(ROOT, "VCPU") == 4 and view.room(ROOT, "PCPU") == 0
    assert view.fits(ROOT, {"VCPU": 3}) and not view.fits(ROOT, {"VCPU": 4})

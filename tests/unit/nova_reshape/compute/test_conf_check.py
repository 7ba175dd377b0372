"""nova.conf against the host description: filled in, disagreements, what is needed."""

from __future__ import annotations

from nova_reshape.compute.conf_check import merge_node, needed_config, render_config
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.nova.conf.device_spec import parse_device_spec
from nova_reshape.virt.releases import DEFAULT_TARGET, find_release
from tests.unit.nova_reshape.virt.helpers import node

GPU_SPEC = parse_device_spec('{"vendor_id": "10de", "product_id": "20b5", '
                             '"resource_class": "a100", "traits": "fast"}')
DEVICE = {"address": "0000:d8:00.0", "vendor_id": "10de", "product_id": "20b5"}


def test_cpu_sets_and_device_tags_fill_what_the_host_file_leaves_out():
    conf = NovaConf(report_in_placement=True, device_spec=tuple(GPU_SPEC),
                    cpu_shared_set=frozenset({0, 1}), cpu_dedicated_set=frozenset({2, 3}))
    merged, findings = merge_node(node(pci_devices=[DEVICE]), conf, DEFAULT_TARGET)
    assert findings == []
    assert (merged.cpu_shared_set, merged.cpu_dedicated_set) == ({0, 1}, {2, 3})
    assert (merged.pci_devices[0].resource_class, merged.pci_devices[0].traits) == (
        "a100", ("fast",))


def test_each_disagreement_names_the_key():
    conf = NovaConf(device_spec=tuple(GPU_SPEC), cpu_dedicated_set=frozenset({2, 3}),
                    enabled_mdev_types=("nvidia-36",))
    desc = node(cpu_dedicated_set="2-5",
                pci_devices=[{**DEVICE, "resource_class": "other"},
                             {"address": "0000:99:00.0", "vendor_id": "1234",
                              "product_id": "5678"}],
                gpus=[{"address": "0000:84:00.0", "capacity": 1, "mdev_types": ["nvidia-35"]}])
    _, findings = merge_node(desc, conf, DEFAULT_TARGET)
    messages = [finding.message for finding in findings]
    assert {finding.code for finding in findings} == {"nova_conf"}
    assert any("[compute] cpu_dedicated_set is 2-3 in nova.conf but 2-5" in m for m in messages)
    assert any("device_spec entry's resource_class" in m for m in messages)
    assert any("0000:99:00.0" in m and "matches no [pci] device_spec" in m for m in messages)
    assert any("nova-compute 34 would refuse to start" in m and "report_in_placement" in m
               for m in messages)
    assert any("[devices] enabled_mdev_types" in m for m in messages)


def test_report_in_placement_only_matters_from_zed():
    conf = NovaConf(device_spec=tuple(GPU_SPEC))
    _, findings = merge_node(node(pci_devices=[DEVICE]), conf, find_release("yoga"))
    assert findings == []


def test_needed_config_and_its_rendering():
    desc = node(cpu_shared_set="0-3", cpu_dedicated_set=[4, 5, 7],
                pci_devices=[{**DEVICE, "traits": ["fast"]}],
                gpus=[{"address": "0000:84:00.0", "capacity": 1, "mdev_types": ["nvidia-35"]}])
    needed = needed_config(desc, DEFAULT_TARGET)
    assert needed["compute"] == {"cpu_shared_set": ["0-3"], "cpu_dedicated_set": ["4-5,7"]}
    assert needed["pci"]["report_in_placement"] == ["True"]
    assert '"resource_class": "CUSTOM_PCI_10DE_20B5"' in needed["pci"]["device_spec"][0]
    assert '"traits": "CUSTOM_FAST"' in needed["pci"]["device_spec"][0]
    assert needed["devices"] == {"enabled_mdev_types": ["nvidia-35"]}
    text = render_config([desc], DEFAULT_TARGET)
    assert "[compute]\ncpu_shared_set = 0-3\ncpu_dedicated_set = 4-5,7\n[pci]\n" in text


RM_SPEC = parse_device_spec('{"vendor_id": "15b3", "product_id": "101e", '
                            '"remote_managed": "true"}')
RM_VF = {"address": "0000:af:00.2", "vendor_id": "15b3", "product_id": "101e",
         "type": "type-VF", "parent": "0000:af:00.0"}


def test_remote_managed_comes_from_device_spec_and_must_agree():
    conf = NovaConf(report_in_placement=True, device_spec=(*GPU_SPEC, *RM_SPEC))
    merged, findings = merge_node(node(pci_devices=[DEVICE, RM_VF]), conf, DEFAULT_TARGET)
    assert findings == [] and merged.pci_devices[1].neutron.remote_managed
    needed = needed_config(merged, DEFAULT_TARGET)["pci"]["device_spec"]
    # nova 34 reports a remote_managed VF without physical network: it keeps its tag and
    # gets the resource class of its provider.
    assert '"remote_managed": "true"' in needed[1]
    assert '"resource_class": "CUSTOM_PCI_15B3_101E"' in needed[1]
    assert "physical_network" not in needed[1]
    conf = NovaConf(report_in_placement=True, device_spec=tuple(GPU_SPEC) + tuple(
        parse_device_spec('{"vendor_id": "15b3", "product_id": "101e"}')))
    _, findings = merge_node(node(pci_devices=[{**RM_VF, "remote_managed": True}]), conf,
                             DEFAULT_TARGET)
    assert [finding.message for finding in findings] == [
        "PCI device 0000:af:00.2: the host file says remote_managed but the [pci] "
        'device_spec entry matching it does not: add "remote_managed": "true" to the entry']


PHYSNET_SPEC = parse_device_spec('{"vendor_id": "15b3", "product_id": "101e", '
                                 '"physical_network": "physnet1", "remote_managed": "true"}')


def test_neutron_devices_alone_need_no_report_in_placement():
    conf = NovaConf(device_spec=tuple(PHYSNET_SPEC))
    merged, findings = merge_node(node(pci_devices=[RM_VF]), conf, DEFAULT_TARGET)
    assert findings == []
    assert "pci" not in needed_config(merged, DEFAULT_TARGET)


def test_a_remote_managed_device_without_physnet_needs_report_in_placement():
    _, findings = merge_node(node(pci_devices=[RM_VF]), NovaConf(device_spec=tuple(RM_SPEC)),
                             DEFAULT_TARGET)
    assert [finding.message for finding in findings] == [
        f"PCI devices are described but [pci] report_in_placement is false: nova-compute "
        f"{DEFAULT_TARGET.number} would refuse to start; set [pci] report_in_placement = True"]

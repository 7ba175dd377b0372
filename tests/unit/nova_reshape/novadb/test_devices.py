"""Which pool of ``compute_nodes.pci_stats`` a device can be in, and what its tags say."""

from __future__ import annotations

from nova_reshape.nova.pci import NeutronTags
from nova_reshape.novadb.devices import PciDevice, PciDevicePool, pool_neutron_tags

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


def test_no_pool_or_pools_that_disagree_say_nothing():
    assert pool_neutron_tags(VF, ()) is None
    assert pool_neutron_tags(VF, (vf_pool(physical_network="physnet1"),
                                  vf_pool(physical_network="physnet2"))) is None

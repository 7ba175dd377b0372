"""Upstream Placement's NUMA/network and Neutron QoS data sets, built through the API.

Same names, structure and environment variables as upstream's fixtures of
these names (docs/gabbi.md draws them); identifiers are random per file.
"""

from __future__ import annotations

from placement_wsgi.testing.datasets import SHARES, DataFixture

__all__ = ["DeepNUMANetworkFixture", "NUMANetworkFixture", "NeutronQoSMultiSegmentFixture"]

#: Owner of NUMANetworkFixture's two allocations.
NUMA_USER, NUMA_PROJECT = "numafx-user", "numafx-project"


class NUMANetworkFixture(DataFixture):
    """cn1 (no inventory): NUMA nodes with devices, two network agents; cn2: NICs with PFs.

    ss1 shares DISK_GB with both computes through AGGA_UUID. numa0 has
    VCPU 2 of 4 used, cn2 VCPU 3 of 8.
    """

    def make_data(self) -> None:
        (agg,) = self.aggregates("AGGA_UUID")
        ss1 = self.build.provider("ss1", agg)
        self.build.traits(ss1, SHARES)
        self.build.inventory(ss1, "DISK_GB", 2000)
        self.set_environ("SS1_UUID", ss1)
        cn1, cn2 = self.make_computes(agg)
        self.make_cn1_tree(cn1, agg)
        self.make_cn2_tree(cn2, agg)

    def make_computes(self, aggregate: str) -> tuple[str | None, str | None]:
        """Compute nodes made in advance (none here: the trees make them)."""
        return None, None

    def make_cn1_tree(self, cn1: str | None, aggregate: str) -> None:
        cn1 = cn1 or self.build.provider("cn1", aggregate)
        self.build.aggregates(cn1, aggregate)
        self.build.traits(cn1, "COMPUTE_VOLUME_MULTI_ATTACH")
        self.set_environ("CN1_UUID", cn1)
        numas = []
        for index in (0, 1):
            numa = self.build.provider(f"numa{index}", parent=cn1)
            self.build.traits(numa, "HW_NUMA_ROOT", *(["CUSTOM_FOO"] if index else []))
            self.build.inventory(numa, "VCPU", 4)
            self.set_environ(f"NUMA{index}_UUID", numa)
            numas.append(numa)
        self.build.inventory(numas[0], "MEMORY_MB", 2048, min_unit=512, step_size=256)
        self.build.inventory(numas[1], "MEMORY_MB", 2048, min_unit=256, max_unit=1024)
        self.build.allocate(numas[0], {"VCPU": 2}, NUMA_PROJECT, NUMA_USER)
        for name, parent, resource_class, total in (
                ("fpga0", numas[0], "FPGA", 1), ("pgpu0", numas[0], "VGPU", 8),
                ("fpga1_0", numas[1], "FPGA", 1), ("fpga1_1", numas[1], "FPGA", 1)):
            device = self.build.provider(name, parent=parent)
            self.build.inventory(device, resource_class, total)
            self.set_environ(f"{name.upper()}_UUID", device)
        sriov_agent = self.build.provider("sriov_agent", parent=cn1)
        self.build.traits(sriov_agent, "CUSTOM_VNIC_TYPE_DIRECT")
        self.set_environ("SRIOV_AGENT_UUID", sriov_agent)
        for index in (1, 2):
            self.network_device(f"esn{index}", sriov_agent, index, 10000 * index)
        ovs_agent = self.build.provider("ovs_agent", parent=cn1)
        self.build.traits(ovs_agent, "CUSTOM_VNIC_TYPE_NORMAL")
        self.set_environ("OVS_AGENT_UUID", ovs_agent)
        self.network_device("br_int", ovs_agent, 0, 1000)

    def network_device(self, name: str, parent: str, physnet: int, bandwidth: int) -> None:
        device = self.build.provider(name, parent=parent)
        self.build.traits(device, f"CUSTOM_PHYSNET{physnet}")
        self.build.inventory(device, "NET_BW_EGR_KILOBIT_PER_SEC", bandwidth)
        self.set_environ(f"{name.upper()}_UUID", device)

    def make_cn2_tree(self, cn2: str | None, aggregate: str) -> None:
        cn2 = cn2 or self.build.provider("cn2")
        self.build.aggregates(cn2, aggregate)
        self.build.inventory(cn2, "VCPU", 8)
        self.build.allocate(cn2, {"VCPU": 3}, NUMA_PROJECT, NUMA_USER)
        self.build.inventory(cn2, "MEMORY_MB", 2048, min_unit=1024, step_size=128)
        self.build.inventory(cn2, "DISK_GB", 1000)
        self.build.traits(cn2, "CUSTOM_FOO")
        self.set_environ("CN2_UUID", cn2)
        nics = []
        for index in (1, 2, 3):
            nic = self.build.provider(f"nic{index}", parent=cn2)
            self.build.traits(nic, "CUSTOM_HW_NIC_ROOT")
            self.set_environ(f"NIC{index}_UUID", nic)
            nics.append(nic)
        # (nic, pf suffix, physnet, VFs)
        for nic, suffix, physnet, vfs in (
                (0, "1_1", 1, 4), (0, "1_2", 2, 4),
                (1, "2_1", 1, 2), (1, "2_2", 2, 2), (1, "2_3", 1, 2), (1, "2_4", 2, 2),
                (2, "3_1", 1, 8)):
            pf = self.build.provider(f"pf{suffix}", parent=nics[nic])
            self.build.traits(pf, f"CUSTOM_PHYSNET{physnet}")
            self.build.inventory(pf, "CUSTOM_VF", vfs)
            self.set_environ(f"PF{suffix}_UUID", pf)


class DeepNUMANetworkFixture(NUMANetworkFixture):
    """NUMANetworkFixture with cn1 under p1 and cn2 under p2, both children of gp1."""

    def make_computes(self, aggregate: str) -> tuple[str | None, str | None]:
        grandparent = self.build.provider("gp1")
        parent1 = self.build.provider("p1", parent=grandparent)
        parent2 = self.build.provider("p2", parent=grandparent)
        return (self.build.provider("cn1", parent=parent1),
                self.build.provider("cn2", parent=parent2))


SRIOV_VNIC_TRAITS = (
    "CUSTOM_VNIC_TYPE_DIRECT", "CUSTOM_VNIC_TYPE_DIRECT_PHYSICAL", "CUSTOM_VNIC_TYPE_MACVTAP")

#: compute -> (bridges, PFs), each (device name, variable suffix, physnet
#: trait, bandwidth each way in kbps).
QOS_COMPUTES = {
    "compute0": ((("br-ex", "br_ex", "CUSTOM_PHYSNET_OTHER", 5000),),
                 (("enp129s0f0", "pf0", "CUSTOM_PHYSNET_OTHER", 10000),)),
    "compute1": ((("br-ex", "br_ex", "CUSTOM_PHYSNET_MSN_S1", 5000),),
                 (("enp129s0f0", "pf0", "CUSTOM_PHYSNET_MSN_S1", 10000),)),
    "compute2": ((("br-ex", "br_ex", "CUSTOM_PHYSNET_MSN_S2", 5000),),
                 (("enp129s0f0", "pf0", "CUSTOM_PHYSNET_MSN_S2", 10000),)),
    "compute3": ((("br-ex", "br_ex", "CUSTOM_PHYSNET_MSN_S1", 1000),
                  ("br-ex2", "br_ex2", "CUSTOM_PHYSNET_MSN_S2", 1000)),
                 (("enp129s0f0", "pf0", "CUSTOM_PHYSNET_MSN_S1", 1000),
                  ("enp129s0f1", "pf1", "CUSTOM_PHYSNET_MSN_S2", 1000))),
}


class NeutronQoSMultiSegmentFixture(DataFixture):
    """Four computes as Neutron reports them with QoS minimum bandwidth and packet rate.

    compute0 reaches physnet OTHER, compute1 MSN_S1, compute2 MSN_S2, and
    compute3 both segments with less bandwidth. Variables are named
    ``computeN``, ``computeN:ovs_agent``, ``computeN:br_ex``,
    ``computeN:sriov_agent``, ``computeN:pf0`` (and ``compute3:br_ex2``,
    ``compute3:pf1``).
    """

    def make_data(self) -> None:
        for compute, (bridges, pfs) in QOS_COMPUTES.items():
            root = self.build.provider(compute)
            self.set_environ(compute, root)
            for resource_class, total in (("VCPU", 8), ("MEMORY_MB", 4096), ("DISK_GB", 500)):
                self.build.inventory(root, resource_class, total)
            ovs_agent = self.agent(compute, root, "Open vSwitch agent", "ovs_agent")
            self.build.inventory(ovs_agent, "NET_PACKET_RATE_KILOPACKET_PER_SEC", 1000)
            self.build.traits(ovs_agent, "CUSTOM_VNIC_TYPE_NORMAL")
            for device in bridges:
                self.device(compute, ovs_agent, "Open vSwitch agent", device,
                            ("CUSTOM_VNIC_TYPE_NORMAL",))
            sriov_agent = self.agent(compute, root, "NIC Switch agent", "sriov_agent")
            self.build.traits(sriov_agent, *SRIOV_VNIC_TRAITS)
            for device in pfs:
                self.device(compute, sriov_agent, "NIC Switch agent", device, SRIOV_VNIC_TRAITS)

    def agent(self, compute: str, root: str, agent_name: str, variable: str) -> str:
        agent = self.build.provider(f"{compute}:{agent_name}", parent=root)
        self.set_environ(f"{compute}:{variable}", agent)
        return agent

    def device(self, compute: str, agent: str, agent_name: str,
               device: tuple[str, str, str, int], vnic_traits: tuple[str, ...]) -> None:
        name, variable, physnet, bandwidth = device
        uuid = self.build.provider(f"{compute}:{agent_name}:{name}", parent=agent)
        self.set_environ(f"{compute}:{variable}", uuid)
        self.build.inventory(uuid, "NET_BW_EGR_KILOBIT_PER_SEC", bandwidth)
        self.build.inventory(uuid, "NET_BW_IGR_KILOBIT_PER_SEC", bandwidth)
        self.build.traits(uuid, *vnic_traits, physnet)

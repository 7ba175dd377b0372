"""The data sets of upstream Placement's gabbi fixtures, built through the API.

Each fixture has upstream's name, creates the same providers (names,
parents, aggregates, inventories, traits, allocations) and puts the same
variables in the environment; docs/gabbi.md lists them. Identifiers are
random for each YAML file.
"""

from __future__ import annotations

import os

from placement_wsgi.testing.builder import ProviderBuilder
from placement_wsgi.testing.fixtures import APIFixture, new_uuid

__all__ = [
    "AllocationFixture", "DataFixture", "GranularFixture", "NUMAAggregateFixture",
    "NonSharedStorageFixture", "SharedStorageFixture",
]

SHARES = "MISC_SHARES_VIA_AGGREGATE"


class DataFixture(APIFixture):
    """An APIFixture whose ``make_entities`` builds with ``self.build``."""

    def make_entities(self) -> None:
        self.build = ProviderBuilder(self.client)
        self.make_data()

    def make_data(self) -> None:
        raise NotImplementedError

    def aggregates(self, *names: str) -> list[str]:
        """A new aggregate uuid for each variable in ``names``, in the environment."""
        uuids = [new_uuid() for _ in names]
        for name, value in zip(names, uuids, strict=True):
            self.set_environ(name, value)
        return uuids


class AllocationFixture(DataFixture):
    """Provider RP_UUID (VCPU 10, DISK_GB 2048) with three consumers' allocations.

    CONSUMER_0 holds DISK_GB 1000 and CONSUMER_ID VCPU 6 (both USER_ID);
    ALT_CONSUMER_ID holds DISK_GB 20 and VCPU 1 for ALT_USER_ID; all in
    PROJECT_ID. ALT_RP_UUID / ALT_RP_NAME name a provider not created.
    """

    def make_data(self) -> None:
        self.set_environ("ALT_USER_ID", new_uuid())
        project, user, alt_user = (os.environ[name] for name in (
            "PROJECT_ID", "USER_ID", "ALT_USER_ID"))
        rp = self.build.provider(os.environ["RP_NAME"], uuid=os.environ["RP_UUID"])
        self.build.inventory(rp, "DISK_GB", 2048, step_size=10, min_unit=10, max_unit=1000)
        self.build.inventory(rp, "VCPU", 10, max_unit=10)
        self.set_environ("CONSUMER_0", self.build.allocate(rp, {"DISK_GB": 1000}, project, user))
        self.set_environ("CONSUMER_ID", self.build.allocate(rp, {"VCPU": 6}, project, user))
        self.set_environ("ALT_CONSUMER_ID", self.build.allocate(
            rp, {"DISK_GB": 20, "VCPU": 1}, project, alt_user))
        self.set_environ("ALT_RP_UUID", new_uuid())
        self.set_environ("ALT_RP_NAME", new_uuid())


class SharedStorageFixture(DataFixture):
    """Computes cn1 and cn2, storage ss and ss2 sharing DISK_GB, all in AGG_UUID.

    Each compute has two NUMA children (numaX_1, numaX_2), each with one PF
    child (pfX_Y, SRIOV_NET_VF 8).
    """

    def make_data(self) -> None:
        (agg,) = self.aggregates("AGG_UUID")
        made = {name: self.build.provider(name, agg) for name in ("cn1", "cn2", "ss", "ss2")}
        for cn in (1, 2):
            for numa in (1, 2):
                made[f"numa{cn}_{numa}"] = self.build.provider(
                    f"numa{cn}_{numa}", parent=made[f"cn{cn}"])
        for cn in (1, 2):
            for numa in (1, 2):
                made[f"pf{cn}_{numa}"] = self.build.provider(
                    f"pf{cn}_{numa}", parent=made[f"numa{cn}_{numa}"])
        for name, uuid in made.items():
            self.set_environ(f"{name.upper()}_UUID", uuid)
        for cn in ("cn1", "cn2"):
            self.build.inventory(made[cn], "VCPU", 24, allocation_ratio=16.0)
            self.build.inventory(made[cn], "MEMORY_MB", 128 * 1024, allocation_ratio=1.5)
        self.build.traits(made["cn1"], "HW_CPU_X86_SSE", "HW_CPU_X86_SSE2")
        self.build.inventory(made["cn2"], "DISK_GB", 2000, reserved=100, allocation_ratio=1.0)
        for shared in ("ss", "ss2"):
            self.build.inventory(made[shared], "DISK_GB", 2000, reserved=100,
                                 allocation_ratio=1.0)
            self.build.traits(made[shared], SHARES)
        for pf in ("pf1_1", "pf1_2", "pf2_1", "pf2_2"):
            self.build.inventory(made[pf], "SRIOV_NET_VF", 8, allocation_ratio=1.0)


class NUMAAggregateFixture(DataFixture):
    """Computes without inventory whose NUMA children have VCPU; two sharing storages.

    cn1 in aggA, cn2 in aggA and aggB, ss1 in aggA; numa1_1 (of cn1) and ss2
    in aggC.
    """

    def make_data(self) -> None:
        agg_a, agg_b, agg_c = self.aggregates("AGGA_UUID", "AGGB_UUID", "AGGC_UUID")
        made = {"cn1": self.build.provider("cn1", agg_a),
                "cn2": self.build.provider("cn2", agg_a, agg_b),
                "ss1": self.build.provider("ss1", agg_a),
                "ss2": self.build.provider("ss2", agg_c)}
        made["numa1_1"] = self.build.provider("numa1_1", agg_c, parent=made["cn1"])
        made["numa1_2"] = self.build.provider("numa1_2", parent=made["cn1"])
        made["numa2_1"] = self.build.provider("numa2_1", parent=made["cn2"])
        made["numa2_2"] = self.build.provider("numa2_2", parent=made["cn2"])
        for name, uuid in made.items():
            self.set_environ(f"{name.upper()}_UUID", uuid)
        for numa in ("numa1_1", "numa1_2", "numa2_1", "numa2_2"):
            self.build.inventory(made[numa], "VCPU", 24, allocation_ratio=16.0)
        for shared in ("ss1", "ss2"):
            self.build.inventory(made[shared], "DISK_GB", 2000, reserved=100,
                                 allocation_ratio=1.0)
            self.build.traits(made[shared], SHARES)


class NonSharedStorageFixture(DataFixture):
    """Computes cn1, cn2, cn3 with VCPU 24, MEMORY_MB 128 GiB and DISK_GB 2000 each.

    AGGA_UUID, AGGB_UUID and AGGC_UUID are set but no provider is in them.
    """

    def make_data(self) -> None:
        self.aggregates("AGGA_UUID", "AGGB_UUID", "AGGC_UUID")
        computes = [self.build.provider(name) for name in ("cn1", "cn2", "cn3")]
        for number, cn in enumerate(computes, 1):
            self.set_environ(f"CN{number}_UUID", cn)
        for cn in computes:
            self.build.inventory(cn, "VCPU", 24)
            self.build.inventory(cn, "MEMORY_MB", 128 * 1024)
            self.build.inventory(cn, "DISK_GB", 2000)


#: GranularFixture's providers: (name, variable, aggregates, inventories, traits).
GRANULAR_PROVIDERS = (
    ("cn_left", "CN_LEFT", ("AGGA",),
     {"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 500, "VGPU": 8, "SRIOV_NET_VF": 8,
      "CUSTOM_NET_MBPS": 4000},
     ("HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_GPU_API_DXVA", "HW_NIC_DCB_PFC", "CUSTOM_FOO")),
    ("cn_middle", "CN_MIDDLE", ("AGGA", "AGGB"),
     {"VCPU": 8, "MEMORY_MB": 4096, "SRIOV_NET_VF": 8, "CUSTOM_NET_MBPS": 4000},
     ("HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_CPU_X86_SSE", "HW_NIC_ACCEL_TLS")),
    ("cn_right", "CN_RIGHT", ("AGGB", "AGGC"),
     {"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 500, "VGPU": 8},
     ("HW_CPU_X86_MMX", "HW_GPU_API_DXVA", "CUSTOM_DISK_SSD")),
    ("shr_disk_1", "SHR_DISK_1", ("AGGA",), {"DISK_GB": 1000}, (SHARES, "CUSTOM_DISK_SSD")),
    ("shr_disk_2", "SHR_DISK_2", ("AGGA", "AGGB"), {"DISK_GB": 1000}, (SHARES,)),
    ("shr_net", "SHR_NET", ("AGGC",), {"SRIOV_NET_VF": 16, "CUSTOM_NET_MBPS": 40000},
     (SHARES,)),
)


class GranularFixture(DataFixture):
    """Three computes and three sharing providers in aggregates AGGA, AGGB, AGGC.

    For granular requests; cn_right's VGPU has max_unit 2.
    """

    def make_data(self) -> None:
        self.build.resource_class("CUSTOM_NET_MBPS")
        aggregates = dict(zip(("AGGA", "AGGB", "AGGC"),
                              self.aggregates("AGGA", "AGGB", "AGGC"), strict=True))
        for name, variable, in_aggregates, inventories, traits in GRANULAR_PROVIDERS:
            uuid = self.build.provider(name, *(aggregates[agg] for agg in in_aggregates))
            self.set_environ(variable, uuid)
            for resource_class, total in inventories.items():
                extra = {"max_unit": 2} if (name, resource_class) == ("cn_right", "VGPU") else {}
                self.build.inventory(uuid, resource_class, total, **extra)
            self.build.traits(uuid, *traits)

"""The NUMA/network and Neutron QoS data sets: the trees and variables they leave."""

from __future__ import annotations

import os

from placement_wsgi.testing.network_datasets import (
    NUMA_PROJECT,
    DeepNUMANetworkFixture,
    NeutronQoSMultiSegmentFixture,
    NUMANetworkFixture,
)
from tests.fixtures.gabbi import started


def providers(fixture) -> dict[str, dict]:
    return {rp["name"]: rp for rp in fixture.client.get("/resource_providers").json[
        "resource_providers"]}


def test_numa_network_shares_disk_and_uses_vcpu_on_numa0_and_cn2(engine: str) -> None:
    with started(NUMANetworkFixture, engine) as fixture:
        made = providers(fixture)
        assert made["ss1"]["uuid"] == os.environ["SS1_UUID"]
        usages = {name: fixture.client.get(
            f"/resource_providers/{made[name]['uuid']}/usages").json["usages"].get("VCPU")
            for name in ("numa0", "cn2")}
        assert usages == {"numa0": 2, "cn2": 3}
        by_project = fixture.client.get(f"/usages?project_id={NUMA_PROJECT}",
                                        microversion="1.9").json["usages"]
        assert by_project["VCPU"] == 5


def test_deep_numa_network_puts_the_computes_under_one_grandparent(engine: str) -> None:
    with started(DeepNUMANetworkFixture, engine) as fixture:
        made = providers(fixture)
        assert made["cn1"]["parent_provider_uuid"] == made["p1"]["uuid"]
        assert made["cn2"]["parent_provider_uuid"] == made["p2"]["uuid"]
        assert {made[name]["root_provider_uuid"] for name in ("numa0", "pf3_1", "ss1")} \
            == {made["gp1"]["uuid"], made["ss1"]["uuid"]}


def test_neutron_qos_names_every_agent_and_device(engine: str) -> None:
    with started(NeutronQoSMultiSegmentFixture, engine) as fixture:
        made = providers(fixture)
        pf1 = os.environ["compute3:pf1"]
        assert made["compute3:NIC Switch agent:enp129s0f1"]["uuid"] == pf1
        traits = fixture.client.get(f"/resource_providers/{pf1}/traits").json["traits"]
        assert "CUSTOM_PHYSNET_MSN_S2" in traits
        inventory = fixture.client.get(f"/resource_providers/{pf1}/inventories").json
        assert inventory["inventories"]["NET_BW_EGR_KILOBIT_PER_SEC"]["total"] == 1000
        assert made["compute0:Open vSwitch agent"]["parent_provider_uuid"] \
            == os.environ["compute0"]

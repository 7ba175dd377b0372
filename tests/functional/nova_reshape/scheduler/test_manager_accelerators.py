"""Device profiles end to end: Cyborg-style providers, the query, the claim, ARQ binding.

Accelerator providers are seeded the way Cyborg writes them (a child of the
compute node per deployable, ``OWNER_CYBORG`` and the device's traits; the
root carries ``COMPUTE_ACCELERATORS``). Cyborg itself is
``nova_reshape.accelerator``'s in-memory ARQ store behind the scheduler's
accelerator seam.
"""

from __future__ import annotations

import json
import uuid
from urllib.parse import parse_qsl, urlsplit

import pytest

from nova_reshape.accelerator.arq import BOUND, ArqStore
from nova_reshape.accelerator.device_profile import DeviceProfile
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.accelerator_seam import AcceleratorRequestFailed, ArqStoreClient
from nova_reshape.scheduler.errors import NoValidHost
from nova_reshape.scheduler.request_spec import RequestSpec
from tests.functional.nova_reshape.scheduler.conftest import (
    consumer,
    make_manager,
    placement,
    usages,
)
from tests.functional.nova_reshape.scheduler.seeding import Provider, compute_node, seed

GB = 1024
PROFILE = DeviceProfile("intel-fpga", ({"resources:FPGA": "1",
                                        "trait:CUSTOM_FPGA_INTEL": "required",
                                        "accel:bitstream_id": "ignored"},))


def accelerated(name: str, memory_gb: int, device_trait: str | None,
                root_accelerators: bool = True, fpgas: int = 1) -> Provider:
    children = []
    if device_trait:
        children.append(Provider(f"{name}-fpga0", inventories={"FPGA": fpgas},
                                 traits=["OWNER_CYBORG", device_trait]))
    return compute_node(name, memory_mb=memory_gb * GB, children=children,
                        traits=["COMPUTE_ACCELERATORS"] if root_accelerators else [])


@pytest.fixture
def world(db_url):
    hosts = {
        "plain": compute_node("plain", memory_mb=128 * GB),
        "xilinx": accelerated("xilinx", 64, "CUSTOM_FPGA_XILINX"),
        "intel": accelerated("intel", 32, "CUSTOM_FPGA_INTEL", fpgas=2),
        "unflagged": accelerated("unflagged", 96, "CUSTOM_FPGA_INTEL", root_accelerators=False),
        "intel2": accelerated("intel2", 16, "CUSTOM_FPGA_INTEL"),
    }
    seed(db_url, list(hosts.values()))
    return hosts


def spec() -> RequestSpec:
    return RequestSpec(flavor=Flavor(vcpus=2, memory_mb=GB, root_gb=10,
                                     extra_specs={"accel:device_profile": "intel-fpga"}))


def test_device_profile_groups_reach_placement_and_arqs_are_bound(db_url, world):
    devices = {world[n].children[0].uuid: f"0000:{i:02x}:00.0"
               for i, n in enumerate(["intel", "intel2"])}
    store = ArqStore([PROFILE], devices=devices)
    with placement(db_url) as client:
        manager, recording = make_manager(client, accelerators=ArqStoreClient(store))
        instances = [str(uuid.uuid4()) for _ in range(2)]
        request_spec = spec()
        result = manager.select_destinations(None, request_spec, instances)

        query = dict(parse_qsl(urlsplit(recording.urls("GET", "/allocation_candidates")[0])
                               .query))
        assert query["resourcesdevice_profile_0"] == "FPGA:1"
        assert query["requireddevice_profile_0"] == "CUSTOM_FPGA_INTEL"
        assert query["root_required"] == "COMPUTE_ACCELERATORS,OWNER_NOVA,!COMPUTE_STATUS_DISABLED"
        # xilinx lacks the trait, unflagged lacks COMPUTE_ACCELERATORS, plain has no FPGA.
        assert sorted(h.host for h in manager.last_traces[0].candidates) == ["intel",
                                                                              "intel2"]
        # "intel" has two FPGAs: both instances fit there (more RAM than intel2).
        assert [group[0].nodename for group in result] == ["intel", "intel"]
        device = world["intel"].children[0].uuid
        for instance, group in zip(instances, result, strict=True):
            allocations = consumer(client, instance)["allocations"]
            assert allocations[device]["resources"] == {"FPGA": 1}
            assert json.loads(group[0].allocation_request)["mappings"][
                "device_profile_0"] == [device]
            (arq_uuid,) = group[0].accel_uuids
            arq = store.arqs[arq_uuid]
            assert (arq.state, arq.hostname, arq.device_rp_uuid, arq.instance_uuid) == (
                BOUND, "intel", device, instance)
        assert request_spec.get_request_group_mapping() == {"device_profile_0": [device]}
        assert usages(client, device) == {"FPGA": 2}
        # Alternates carry their own candidate, with the other host's device.
        assert [s.nodename for s in result[0][1:]] == ["intel2"]


def test_a_failed_binding_releases_the_claims_and_the_arqs(db_url, world):
    class Unbindable(ArqStoreClient):
        def bind_arqs(self, bindings):
            raise RuntimeError("cyborg refused the binding")

    store = ArqStore([PROFILE])
    with placement(db_url) as client:
        manager, _ = make_manager(client, accelerators=Unbindable(store))
        instance = str(uuid.uuid4())
        with pytest.raises(AcceleratorRequestFailed, match="refused"):
            manager.select_destinations(None, spec(), [instance])
        assert consumer(client, instance)["allocations"] == {}
        assert store.list() == []


def test_an_unknown_device_profile_is_no_valid_host(db_url, world):
    with placement(db_url) as client:
        manager, recording = make_manager(client, accelerators=ArqStoreClient(ArqStore([])))
        with pytest.raises(NoValidHost, match="intel-fpga"):
            manager.select_destinations(None, spec(), [str(uuid.uuid4())])
        assert recording.calls == []

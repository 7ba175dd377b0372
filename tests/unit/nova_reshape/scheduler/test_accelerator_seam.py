"""The accelerator seam: request groups from dicts, ARQs matched through mappings and bound."""

from __future__ import annotations

import pytest

from nova_reshape.accelerator.arq import BOUND, ArqStore
from nova_reshape.accelerator.device_profile import DeviceProfile
from nova_reshape.scheduler.accelerator_seam import (
    AcceleratorRequestFailed,
    ArqStoreClient,
    as_request_group,
    create_and_bind,
    match_arqs,
)

RP = "c0000000-0000-4000-8000-000000000001"
DEV = "d0000000-0000-4000-8000-000000000001"


def test_as_request_group_accepts_dicts():
    group = as_request_group({"requester_id": "x", "resources": {"FPGA": "2"},
                              "forbidden_traits": ["CUSTOM_OLD"]})
    assert (group.requester_id, group.resources, group.forbidden_traits) == (
        "x", {"FPGA": 2}, {"CUSTOM_OLD"})


def test_arqs_are_matched_through_mappings_and_bound():
    store = ArqStore([DeviceProfile("dp", ({"resources:FPGA": "2"}, {"resources:PGPU": "1"}))],
                     devices={DEV: "0000:af:00.1", "gpu": "0000:3b:00.0"})
    client = ArqStoreClient(store)
    uuids = create_and_bind(client, "dp", "inst-1", "node1",
                            {"device_profile_0": [DEV], "device_profile_1": ["gpu"]})
    assert len(uuids) == 3
    arqs = {arq.uuid: arq for arq in store.list(instance="inst-1")}
    assert set(arqs) == set(uuids)
    assert all(arq.state == BOUND and arq.hostname == "node1" for arq in arqs.values())
    assert sorted(arq.device_rp_uuid for arq in arqs.values()) == [DEV, DEV, "gpu"]


def test_an_unmapped_group_fails_and_the_created_arqs_are_deleted():
    store = ArqStore([DeviceProfile("dp", ({"resources:FPGA": "1"},))])
    with pytest.raises(AcceleratorRequestFailed, match="device_profile_0"):
        create_and_bind(ArqStoreClient(store), "dp", "inst-1", "node1", {"": [RP]})
    assert store.list() == []
    with pytest.raises(AcceleratorRequestFailed):
        match_arqs([{"uuid": "a", "device_profile_group_id": 1}], {"device_profile_1": []})


def test_a_failing_bind_is_wrapped_and_cleaned_up():
    class Broken(ArqStoreClient):
        def bind_arqs(self, bindings):
            raise RuntimeError("cyborg is down")

    store = ArqStore([DeviceProfile("dp", ({"resources:FPGA": "1"},))])
    with pytest.raises(AcceleratorRequestFailed, match="cyborg is down"):
        create_and_bind(Broken(store), "dp", "i", "n", {"device_profile_0": [DEV]})
    assert store.list() == []

"""Candidate matching, ARQ binding and unbinding."""

from __future__ import annotations

import pytest

from nova_reshape.accelerator import arq as arq_module
from nova_reshape.accelerator.arq import ArqStore, bind_patch, match_candidate, unbind_patch
from nova_reshape.accelerator.device_profile import (
    DeviceProfile,
    group_mapping,
    request_groups,
)
from tests.unit.nova_reshape.accelerator.helpers import PROFILE

FPGA_RP = "ffffffff-0000-4000-8000-000000000000"
GPU_RP = "99999999-0000-4000-8000-000000000000"
ROOT = "aaaaaaaa-0000-4000-8000-000000000000"
INSTANCE = "11111111-1111-4111-8111-111111111111"


def _candidates(fpga_amount=2):
    return {"allocation_requests": [
        {"allocations": {ROOT: {"resources": {"VCPU": 1}},
                         FPGA_RP: {"resources": {"FPGA": fpga_amount}}},
         "mappings": {"": [ROOT], "device_profile_0": [FPGA_RP]}},
        {"allocations": {ROOT: {"resources": {"VCPU": 1}},
                         FPGA_RP: {"resources": {"FPGA": 2}}, GPU_RP: {"resources": {"PGPU": 1}}},
         "mappings": {"": [ROOT], "device_profile_0": [FPGA_RP],
                      "device_profile_1": [GPU_RP]}},
    ]}


def test_first_candidate_mapping_every_group_is_chosen_and_fills_providers():
    groups = request_groups(PROFILE)
    # The first candidate maps no provider for device_profile_1: the second wins.
    assert match_candidate(_candidates(), groups) == _candidates()["allocation_requests"][1]
    assert group_mapping(groups) == {"device_profile_0": [FPGA_RP],
                                     "device_profile_1": [GPU_RP]}


def test_candidate_whose_provider_lacks_the_amount_is_skipped():
    groups = request_groups(DeviceProfile("f", (PROFILE.groups[0],)))
    assert match_candidate({"allocation_requests": _candidates(1)["allocation_requests"][:1]},
                           groups) is None
    assert groups[0].provider_uuids == []


def test_create_bind_unbind_and_delete():
    store = ArqStore([PROFILE], devices={FPGA_RP: "0000:5e:00.0", GPU_RP: "0000:d8:00.1"})
    arqs = store.create("fpga-and-gpu")
    assert [a.device_profile_group_id for a in arqs] == [0, 0, 1]  # FPGA:2 -> two ARQs
    assert {a.state for a in arqs} == {"Initial"}
    groups = request_groups(PROFILE)
    match_candidate(_candidates(), groups)
    body = bind_patch(arqs, group_mapping(groups), "cmp-07", INSTANCE)
    assert body[arqs[2].uuid] == [
        {"op": "add", "path": "/hostname", "value": "cmp-07"},
        {"op": "add", "path": "/device_rp_uuid", "value": GPU_RP},
        {"op": "add", "path": "/instance_uuid", "value": INSTANCE}]
    store.patch(body)
    bound = store.list(instance=INSTANCE)
    assert len(bound) == 3 and arq_module.resolved(bound)
    assert bound[2].attach_handle_type == "PCI"
    assert bound[2].attach_handle_info == {"domain": "0000", "bus": "d8", "device": "00",
                                           "function": "1"}
    store.patch(unbind_patch(bound[:1]))
    assert bound[0].state == "Initial" and bound[0].device_rp_uuid is None
    assert not arq_module.resolved(store.list())
    assert store.delete(instance=INSTANCE) == 2 and len(store.list()) == 1


def test_binding_to_an_unknown_device_fails_the_bind():
    store = ArqStore([PROFILE])
    arqs = store.create("fpga-and-gpu")
    store.patch(bind_patch(arqs[:1], {"device_profile_0": [ROOT]}, "cmp-07", INSTANCE))
    assert arqs[0].state == "BindFailed" and arq_module.resolved(arqs[:1])


def test_bind_patch_needs_a_provider_for_every_group():
    arqs = ArqStore([PROFILE]).create("fpga-and-gpu")
    with pytest.raises(arq_module.ArqError, match="device_profile_1"):
        bind_patch(arqs, {"device_profile_0": [FPGA_RP]}, "cmp-07", INSTANCE)


def test_bad_patches_change_nothing():
    store = ArqStore([PROFILE])
    arqs = store.create("fpga-and-gpu")
    with pytest.raises(arq_module.ArqError, match="unsupported"):
        store.patch({arqs[0].uuid: [{"op": "add", "path": "/hostname", "value": "h"}],
                     arqs[1].uuid: [{"op": "replace", "path": "/state", "value": "Bound"}]})
    assert arqs[0].hostname is None
    with pytest.raises(arq_module.ArqError, match="no ARQ"):
        store.patch({"nope": []})
    with pytest.raises(arq_module.ArqError, match="no device profile"):
        store.create("nope")

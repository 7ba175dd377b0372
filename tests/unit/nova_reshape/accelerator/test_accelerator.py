"""Device profiles to request groups, candidate matching, ARQ binding and unbinding."""

from __future__ import annotations

import pytest

from nova_reshape.accelerator import arq as arq_module
from nova_reshape.accelerator.arq import ArqStore, bind_patch, match_candidate, unbind_patch
from nova_reshape.accelerator.device_profile import (
    DeviceProfile,
    DeviceProfileError,
    group_mapping,
    query_params,
    request_groups,
    requester_id,
    select_profile,
)

PROFILE = DeviceProfile("fpga-and-gpu", (
    {"resources:FPGA": "2", "trait:CUSTOM_FPGA_INTEL_PAC": "required",
     "trait:CUSTOM_OLD": "forbidden", "trait:CUSTOM_IGNORED": "preferred",
     "accel:bitstream_id": "abc"},
    {"resources1:PGPU": "1", "trait1:CUSTOM_A100": "required"},
))
FPGA_RP = "ffffffff-0000-4000-8000-000000000000"
GPU_RP = "99999999-0000-4000-8000-000000000000"
ROOT = "aaaaaaaa-0000-4000-8000-000000000000"
INSTANCE = "11111111-1111-4111-8111-111111111111"


def test_groups_get_device_profile_requester_ids_resources_and_traits():
    fpga, gpu = request_groups(PROFILE)
    assert fpga.requester_id == "device_profile_0" and fpga.use_same_provider
    assert fpga.resources == {"FPGA": 2}
    assert fpga.required_traits == {"CUSTOM_FPGA_INTEL_PAC"}
    assert fpga.forbidden_traits == {"CUSTOM_OLD"}
    assert gpu.requester_id == "device_profile_1" and gpu.resources == {"PGPU": 1}


def test_port_owned_profile_appends_the_port_uuid():
    assert requester_id(0, "port-uuid") == "device_profile_0port-uuid"
    assert request_groups(PROFILE, owner="p")[1].requester_id == "device_profile_1p"


def test_bad_amount_is_a_device_profile_error():
    with pytest.raises(DeviceProfileError, match="not a non-negative integer"):
        request_groups(DeviceProfile("bad", ({"resources:FPGA": "two"},)))


def test_exactly_one_profile_by_name():
    assert select_profile("x", [PROFILE]) is PROFILE
    with pytest.raises(DeviceProfileError, match="got 0"):
        select_profile("x", [])


def test_query_params_are_suffixed_groups():
    assert query_params(request_groups(PROFILE)) == [
        ("requireddevice_profile_0", "CUSTOM_FPGA_INTEL_PAC,!CUSTOM_OLD"),
        ("requireddevice_profile_1", "CUSTOM_A100"),
        ("resourcesdevice_profile_0", "FPGA:2"),
        ("resourcesdevice_profile_1", "PGPU:1")]


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

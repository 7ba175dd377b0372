"""Device profiles to request groups and their query parameters."""

from __future__ import annotations

import json

import pytest

from nova_reshape.accelerator.device_profile import (
    DeviceProfile,
    DeviceProfileError,
    ProfileCatalogue,
    profile_from_json,
    query_params,
    request_groups,
    requester_id,
    select_profile,
)
from tests.unit.nova_reshape.accelerator.helpers import PROFILE


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


def test_a_stored_profile_reads_as_cyborg_writes_it():
    text = json.dumps({"groups": [{"resources:FPGA": "1", "accel:bitstream_id": None}]})
    assert profile_from_json("dp", text, "u-1") == DeviceProfile(
        "dp", ({"resources:FPGA": "1", "accel:bitstream_id": None},), "u-1")
    for broken, why in (("{", "not JSON"), ("[]", "no list of groups"),
                        ('{"groups": [{"resources:FPGA": 1}]}', "no list of groups")):
        with pytest.raises(DeviceProfileError, match=why):
            profile_from_json("dp", broken)


def test_the_catalogue_resolves_exactly_one_profile_per_name():
    one = json.dumps({"groups": [{"resources:FPGA": "2", "trait:CUSTOM_A10": "required"}]})
    catalogue = ProfileCatalogue([("dp", "u-1", one), ("twice", "u-2", one),
                                  ("twice", "u-3", one), ("bad", "u-4", "{")])
    (group,) = catalogue.get_device_profile_request_groups("dp")
    assert (group.requester_id, group.resources, group.required_traits) == (
        "device_profile_0", {"FPGA": 2}, {"CUSTOM_A10"})
    for name, why in (("nope", "no such profile"), ("twice", "exactly one profile, got 2"),
                      ("bad", "not JSON")):
        with pytest.raises(DeviceProfileError, match=why):
            catalogue.get_device_profile_request_groups(name)
    with pytest.raises(DeviceProfileError, match="Device profile name dp: not given"):
        ProfileCatalogue(absent="not given").get_device_profile_request_groups("dp")

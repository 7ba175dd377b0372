"""The accelerator and owner-nova pre-filters (prefilters/devices.py)."""

from __future__ import annotations

import pytest

from nova_reshape.accelerator.arq import ArqStore
from nova_reshape.accelerator.device_profile import DeviceProfile
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler.accelerator_seam import ArqStoreClient
from nova_reshape.scheduler.request_spec import RequestSpec
from nova_reshape.scheduler.resource_request import RequestGroup
from tests.unit.nova_reshape.scheduler.prefilters.helpers import (
    make_spec,
    run_filters,
)

# -- accelerators_filter ----------------------------------------------------------------

def test_accelerators_require_the_trait_only_for_device_profiles():
    class Resolver:
        def get_device_profile_request_groups(self, name):
            return [RequestGroup(requester_id="device_profile_0", resources={"FPGA": 1})]

    spec, steps = run_filters(make_spec({"accel:device_profile": "dp"}), resolver=Resolver())
    assert steps["accelerators_filter"].added == {
        "root_required": ["COMPUTE_ACCELERATORS"], "request_groups": ["device_profile_0"]}
    spec, steps = run_filters(make_spec())
    assert "COMPUTE_ACCELERATORS" not in spec.root_required


# -- owner_nova_filter ----------------------------------------------------------------------

def test_owner_nova_follows_the_minimum_compute_version():
    spec, steps = run_filters(version=73)
    assert steps["owner_nova_filter"].added == {"root_required": ["OWNER_NOVA"]}
    spec, steps = run_filters(version=72)
    assert not steps["owner_nova_filter"].ran and "OWNER_NOVA" not in spec.root_required
    already = RequestSpec(root_required={"OWNER_NOVA"})
    spec, steps = run_filters(already, version=1)
    assert steps["owner_nova_filter"].ran and not steps["owner_nova_filter"].added


def test_device_profile_prefilter_resolves_groups_and_requires_accelerators():
    store = ArqStore([DeviceProfile("dp", ({"resources:FPGA": "1",
                                            "trait:CUSTOM_INTEL": "required"},))])
    spec = RequestSpec(flavor=Flavor(extra_specs={"accel:device_profile": "dp"}))
    prefilters.accelerators(spec, ArqStoreClient(store))
    prefilters.accelerators(spec, ArqStoreClient(store))  # already resolved: no duplicate
    assert spec.root_required == {"COMPUTE_ACCELERATORS"}
    assert [(g.requester_id, g.resources, g.required_traits)
            for g in spec.requested_resources] == [
        ("device_profile_0", {"FPGA": 1}, {"CUSTOM_INTEL"})]
    assert all(isinstance(g, RequestGroup) for g in spec.requested_resources)
    missing = RequestSpec(flavor=Flavor(extra_specs={"accel:device_profile": "nope"}))
    with pytest.raises(prefilters.RequestFilterFailed, match="nope"):
        prefilters.accelerators(missing, ArqStoreClient(store))
    with pytest.raises(prefilters.RequestFilterFailed, match="no accelerator service"):
        prefilters.accelerators(RequestSpec(flavor=Flavor(
            extra_specs={"accel:device_profile": "dp"})), None)

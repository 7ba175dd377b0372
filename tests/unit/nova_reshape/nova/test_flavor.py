"""The one Flavor record: defaults for a scheduler request, hw:cpu_policy for readers."""

from __future__ import annotations

import pytest

from nova_reshape.nova.errors import ObjectFormatError
from nova_reshape.nova.flavor import CpuPolicy, Flavor, policy_of


def test_defaults_are_a_scheduler_request_of_one_small_instance():
    flavor = Flavor()
    assert (flavor.name, flavor.vcpus, flavor.memory_mb, flavor.root_gb, flavor.flavorid) == \
        ("flavor", 1, 512, 0, "")
    assert flavor.cpu_policy is None


def test_cpu_policy_from_extra_specs():
    assert Flavor(extra_specs={"hw:cpu_policy": "dedicated"}).cpu_policy is CpuPolicy.DEDICATED
    with pytest.raises(ObjectFormatError, match="flavor p1: unknown cpu_policy 'pinned'"):
        Flavor(flavorid="p1", extra_specs={"hw:cpu_policy": "pinned"}).cpu_policy  # noqa: B018
    assert policy_of("mixed", "cell 0") is CpuPolicy.MIXED and policy_of(None, "x") is None


def test_an_unknown_cpu_policy_is_a_format_error_naming_where():
    assert policy_of("dedicated", "cell") is CpuPolicy.DEDICATED
    with pytest.raises(ObjectFormatError, match="cell: unknown cpu_policy 'pinned'"):
        policy_of("pinned", "cell")

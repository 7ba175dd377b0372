"""The request pre-filters that ask for host aggregates (prefilters/aggregates.py)."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.prefilters import RequestFilterFailed
from tests.unit.nova_reshape.scheduler.prefilters.helpers import (
    make_spec,
    run_filters,
)

# -- require_tenant_aggregate -------------------------------------------------------

def test_tenant_aggregate_off_by_default():
    spec, steps = run_filters(make_spec(project_id="p1"))
    assert not steps["require_tenant_aggregate"].ran and spec.requested_destination is None


def test_tenant_aggregate_requires_the_tenants_aggregates():
    spec, steps = run_filters(make_spec(project_id="p1"),
                              scheduler={"limit_tenants_to_placement_aggregate": True})
    assert spec.requested_destination.aggregates == ["agg-t1,agg-t2"]
    assert steps["require_tenant_aggregate"].added == {"member_of": ["agg-t1,agg-t2"]}


def test_tenant_without_aggregate_passes_unless_required():
    spec, _ = run_filters(make_spec(project_id="p9"),
                          scheduler={"limit_tenants_to_placement_aggregate": True})
    assert spec.requested_destination is None
    with pytest.raises(RequestFilterFailed, match="No hosts available for tenant p9") as info:
        run_filters(make_spec(project_id="p9"), scheduler={
            "limit_tenants_to_placement_aggregate": True,
            "placement_aggregate_required_for_tenants": True})
    assert info.value.steps[-1].name == "require_tenant_aggregate"
    assert info.value.steps[-1].failed


# -- map_az_to_placement_aggregate --------------------------------------------------

def test_az_maps_to_its_aggregates_and_no_az_does_nothing():
    spec, steps = run_filters(make_spec(availability_zone="az1"))
    assert steps["map_az_to_placement_aggregate"].added == {"member_of": ["agg-az"]}
    spec, steps = run_filters(make_spec())
    assert not steps["map_az_to_placement_aggregate"].ran
    assert spec.requested_destination is None


# -- isolate_aggregates ---------------------------------------------------------------

def test_isolated_aggregates_forbid_those_whose_trait_is_not_required():
    on = {"enable_isolated_aggregate_filtering": True}
    spec, steps = run_filters(make_spec({"trait:CUSTOM_GPU": "required"}), scheduler=on)
    assert steps["isolate_aggregates"].added == {"forbidden_aggregates": ["agg-ssd"]}
    spec, steps = run_filters(make_spec(props={"traits_required": ["CUSTOM_GPU", "CUSTOM_SSD"]}),
                              scheduler=on)
    assert not steps["isolate_aggregates"].added
    spec, steps = run_filters(make_spec({"trait:CUSTOM_GPU": "required"}))
    assert not steps["isolate_aggregates"].ran and spec.requested_destination is None

"""The request pre-filter runner: nova 34 order and defaults (prefilters/__init__.py)."""

from __future__ import annotations

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler.request_spec import RequestSpec
from tests.unit.nova_reshape.scheduler.prefilters.helpers import run_filters

NOVA34_ORDER = [
    "require_tenant_aggregate", "map_az_to_placement_aggregate",
    "require_image_type_support", "compute_status_filter", "isolate_aggregates",
    "transform_image_metadata", "accelerators_filter", "packed_virtqueue_filter",
    "routed_networks_filter", "remote_managed_ports_filter",
    "ephemeral_encryption_filter", "virtio_sound_filter", "tpm_secret_security_filter",
    "owner_nova_filter",
]


def test_fourteen_filters_in_nova_34_order():
    assert [name for name, _ in prefilters.REQUEST_FILTERS] == NOVA34_ORDER
    _, steps = run_filters()
    assert list(steps) == NOVA34_ORDER


def test_defaults_forbid_disabled_computes_and_require_owner_nova():
    spec, steps = run_filters()
    assert spec.root_forbidden == {"COMPUTE_STATUS_DISABLED"}
    assert spec.root_required == {"OWNER_NOVA"}
    assert steps["compute_status_filter"].added == {"root_forbidden": ["COMPUTE_STATUS_DISABLED"]}
    assert steps["owner_nova_filter"].added == {"root_required": ["OWNER_NOVA"]}
    assert {name for name, step in steps.items() if step.ran} == {
        "compute_status_filter", "accelerators_filter",
        "packed_virtqueue_filter", "remote_managed_ports_filter", "owner_nova_filter"}


def test_prefilters_edit_the_spec_once():
    spec = RequestSpec(availability_zone="az1")
    aggregates = [Aggregate("a", frozenset(), {"availability_zone": "az1"}, uuid="agg-b"),
                  Aggregate("b", frozenset(), {"availability_zone": "az1"}, uuid="agg-a"),
                  Aggregate("c", frozenset(), {"availability_zone": "az2"}, uuid="agg-c")]
    for _ in range(2):
        prefilters.run_prefilters(spec, aggregates=aggregates, require_owner_nova=True)
    assert spec.requested_destination.aggregates == ["agg-a,agg-b"]
    assert spec.root_forbidden == {"COMPUTE_STATUS_DISABLED"}
    assert spec.root_required == {"OWNER_NOVA"}
    nowhere = RequestSpec(availability_zone="az9")
    prefilters.availability_zone(nowhere, aggregates)
    assert nowhere.requested_destination is None

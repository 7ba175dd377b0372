"""Each request pre-filter, on and off, through the candidate engine (live explain).

Two compute nodes: ``capable`` has what the pre-filter asks for (a trait, an
aggregate membership), ``plain`` has not. With the pre-filter applying only
``capable`` is a candidate and ``plain`` gets the Placement-side reason;
with it off (option unset, or the flavor/image not asking) both are
candidates. Runs on every enabled engine.
"""

from __future__ import annotations

import dataclasses

import pytest

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.live.explain import PlacementHostStates, run
from nova_reshape.scheduler.live.placement import from_database
from nova_reshape.scheduler.live.reasons import Reason
from nova_reshape.scheduler.live.request import LiveRequest
from tests.functional.nova_reshape.scheduler.seeding import compute_node, seed

AGG = "a9a9a9a9-0000-4000-8000-000000000001"


@dataclasses.dataclass
class Case:
    name: str
    options: dict
    extra_specs: dict = dataclasses.field(default_factory=dict)
    image: dict = dataclasses.field(default_factory=dict)
    capable_traits: tuple = ()
    plain_traits: tuple = ()
    aggregates: tuple = ()          # nova aggregates (uuid AGG) given to the pre-filters
    capable_in_agg: bool = False
    plain_in_agg: bool = False
    reason: Reason = Reason.ROOT_REQUIRED
    off: dict = dataclasses.field(default_factory=dict)   # changes that turn it off


CASES = [
    Case("transform_image_metadata", {"image_metadata_prefilter": True},
         image={"hw_disk_bus": "virtio"}, capable_traits=("COMPUTE_STORAGE_BUS_VIRTIO",),
         off={"options": {}}),
    Case("packed_virtqueue_filter", {}, extra_specs={"hw:virtio_packed_ring": "true"},
         capable_traits=("COMPUTE_NET_VIRTIO_PACKED",), off={"extra_specs": {}}),
    Case("ephemeral_encryption_filter", {}, extra_specs={"hw:ephemeral_encryption": "true"},
         capable_traits=("COMPUTE_EPHEMERAL_ENCRYPTION",), off={"extra_specs": {}}),
    Case("virtio_sound_filter", {}, extra_specs={"hw:sound_model": "virtio"},
         capable_traits=("COMPUTE_SOUND_MODEL_VIRTIO",),
         off={"extra_specs": {"hw:sound_model": "ich9"}}),
    Case("tpm_secret_security_filter", {}, extra_specs={"hw:tpm_version": "2.0"},
         capable_traits=("COMPUTE_SECURITY_TPM_2_0",
                         "COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER"),
         plain_traits=("COMPUTE_SECURITY_TPM_2_0",), off={"extra_specs": {}}),
    Case("compute_status_filter", {}, plain_traits=("COMPUTE_STATUS_DISABLED",),
         reason=Reason.ROOT_FORBIDDEN, off=None),
    Case("require_tenant_aggregate", {"limit_tenants_to_placement_aggregate": True},
         aggregates=({"filter_tenant_id": "p1"},), capable_in_agg=True,
         reason=Reason.NOT_MEMBER, off={"options": {}}),
    Case("map_az_to_placement_aggregate", {}, aggregates=({"availability_zone": "az1"},),
         capable_in_agg=True, reason=Reason.NOT_MEMBER, off={"az": None}),
    Case("isolate_aggregates", {"enable_isolated_aggregate_filtering": True},
         aggregates=({"trait:CUSTOM_LICENSED": "required"},), plain_in_agg=True,
         reason=Reason.NOT_MEMBER, off={"options": {}}),
]


class Source(PlacementHostStates):
    def __init__(self, metadata):
        self.metadata = metadata

    def aggregates(self):
        return [Aggregate(f"agg{i}", frozenset(), m, uuid=AGG)
                for i, m in enumerate(self.metadata)]


def _run(db_url, case, options, extra_specs, az):
    live = LiveRequest(vcpus=1, ram_mb=512, disk_gb=1, extra_specs=extra_specs,
                       image_properties=case.image, availability_zone=az, project_id="p1")
    return run(live, lambda query: from_database(db_url, query),
               SchedulerConfig({"scheduler": options}), Source(case.aggregates))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_prefilter_on_and_off(db_url, case):
    seed(db_url, [
        compute_node("capable", traits=list(case.capable_traits),
                     aggregates=[AGG] if case.capable_in_agg else []),
        compute_node("plain", traits=list(case.plain_traits),
                     aggregates=[AGG] if case.plain_in_agg else []),
    ])
    result = _run(db_url, case, case.options, case.extra_specs, "az1")
    step = {s.name: s for s in result.steps}[case.name]
    assert step.ran and step.added
    names = {result.view.roots[u] for u in result.view.candidate_roots}
    assert names == {"capable"}
    (verdict,) = result.view.verdicts
    assert (verdict.name, verdict.reason) == ("plain", case.reason)
    if case.off is None:
        return  # always on
    off = {"options": case.options, "extra_specs": case.extra_specs, "az": "az1"}
    off.update(case.off)
    result = _run(db_url, case, off["options"], off["extra_specs"], off["az"])
    assert not {s.name: s for s in result.steps}[case.name].added
    assert {result.view.roots[u] for u in result.view.candidate_roots} == {"capable", "plain"}

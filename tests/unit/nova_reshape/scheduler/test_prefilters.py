"""The fourteen request pre-filters: each on and off, in nova 34's order."""

from __future__ import annotations

import pytest

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.image import image_properties
from nova_reshape.scheduler.prefilters import PrefilterContext, RequestFilterFailed
from nova_reshape.scheduler.request_spec import ImageMeta, RequestedNetwork, RequestSpec
from nova_reshape.scheduler.resource_request import RequestGroup

NOVA34_ORDER = [
    "require_tenant_aggregate", "map_az_to_placement_aggregate",
    "require_image_type_support", "compute_status_filter", "isolate_aggregates",
    "transform_image_metadata", "accelerators_filter", "packed_virtqueue_filter",
    "routed_networks_filter", "remote_managed_ports_filter",
    "ephemeral_encryption_filter", "virtio_sound_filter", "tpm_secret_security_filter",
    "owner_nova_filter",
]

AGGREGATES = [
    Aggregate("t1", frozenset(), {"filter_tenant_id": "p1"}, uuid="agg-t1"),
    Aggregate("t2", frozenset(), {"filter_tenant_id_2": "p1", "other": "x"}, uuid="agg-t2"),
    Aggregate("t3", frozenset(), {"filter_tenant_id": "p2"}, uuid="agg-t3"),
    Aggregate("az", frozenset(), {"availability_zone": "az1"}, uuid="agg-az"),
    Aggregate("gpu", frozenset(), {"trait:CUSTOM_GPU": "required"}, uuid="agg-gpu"),
    Aggregate("ssd", frozenset(), {"trait:CUSTOM_SSD": "required"}, uuid="agg-ssd"),
]


class Neutron:
    """A network service double: ports, remote-managed ports, segment aggregates."""

    ports = {"p-fixed": {"fixed_ips": [{"subnet_id": "s1"}], "network_id": "n1"},
             "p-free": {"fixed_ips": [], "network_id": "n2"},
             "p-dpu": {"fixed_ips": [], "network_id": "n3"}}

    def show_port(self, port_id):
        return self.ports[port_id]

    def is_remote_managed_port(self, port_id):
        return port_id == "p-dpu"

    def aggregates_for_network(self, network_id):
        if network_id == "broken":
            raise LookupError(network_id)
        return {"n1": ["seg-a", "seg-b"], "n2": ["seg-c"], "n3": []}[network_id]

    def aggregates_for_subnet(self, subnet_id):
        return {"s1": ["seg-a"]}[subnet_id]


def _run(spec=None, *, scheduler=None, aggregates=AGGREGATES, version=None, networks=None,
         resolver=None):
    spec = spec or RequestSpec()
    conf = SchedulerConfig({"scheduler": scheduler or {}})
    context = PrefilterContext(conf, aggregates=aggregates, networks=networks,
                               min_compute_version=version, resolver=resolver)
    steps = prefilters.run_request_filters(spec, context)
    return spec, {step.name: step for step in steps}


def _spec(extra_specs=None, props=None, **fields):
    return RequestSpec(flavor=Flavor(extra_specs=dict(extra_specs or {})),
                       image=ImageMeta(properties=image_properties(props or {}),
                                       disk_format=fields.pop("disk_format", None)),
                       **fields)


def test_fourteen_filters_in_nova_34_order():
    assert [name for name, _ in prefilters.REQUEST_FILTERS] == NOVA34_ORDER
    _, steps = _run()
    assert list(steps) == NOVA34_ORDER


def test_defaults_forbid_disabled_computes_and_require_owner_nova():
    spec, steps = _run()
    assert spec.root_forbidden == {"COMPUTE_STATUS_DISABLED"}
    assert spec.root_required == {"OWNER_NOVA"}
    assert steps["compute_status_filter"].added == {"root_forbidden": ["COMPUTE_STATUS_DISABLED"]}
    assert steps["owner_nova_filter"].added == {"root_required": ["OWNER_NOVA"]}
    assert {name for name, step in steps.items() if step.ran} == {
        "compute_status_filter", "accelerators_filter",
        "packed_virtqueue_filter", "remote_managed_ports_filter", "owner_nova_filter"}


# -- require_tenant_aggregate -------------------------------------------------------

def test_tenant_aggregate_off_by_default():
    spec, steps = _run(_spec(project_id="p1"))
    assert not steps["require_tenant_aggregate"].ran and spec.requested_destination is None


def test_tenant_aggregate_requires_the_tenants_aggregates():
    spec, steps = _run(_spec(project_id="p1"),
                       scheduler={"limit_tenants_to_placement_aggregate": True})
    assert spec.requested_destination.aggregates == ["agg-t1,agg-t2"]
    assert steps["require_tenant_aggregate"].added == {"member_of": ["agg-t1,agg-t2"]}


def test_tenant_without_aggregate_passes_unless_required():
    spec, _ = _run(_spec(project_id="p9"), scheduler={"limit_tenants_to_placement_aggregate": True})
    assert spec.requested_destination is None
    with pytest.raises(RequestFilterFailed, match="No hosts available for tenant p9") as info:
        _run(_spec(project_id="p9"), scheduler={
            "limit_tenants_to_placement_aggregate": True,
            "placement_aggregate_required_for_tenants": True})
    assert info.value.steps[-1].name == "require_tenant_aggregate"
    assert info.value.steps[-1].failed


# -- map_az_to_placement_aggregate --------------------------------------------------

def test_az_maps_to_its_aggregates_and_no_az_does_nothing():
    spec, steps = _run(_spec(availability_zone="az1"))
    assert steps["map_az_to_placement_aggregate"].added == {"member_of": ["agg-az"]}
    spec, steps = _run(_spec())
    assert not steps["map_az_to_placement_aggregate"].ran
    assert spec.requested_destination is None


# -- require_image_type_support -----------------------------------------------------

def test_image_type_support_on_off_and_boot_from_volume():
    on = {"query_placement_for_image_type_support": True}
    spec, steps = _run(_spec(disk_format="qcow2"), scheduler=on)
    assert steps["require_image_type_support"].added == {
        "root_required": ["COMPUTE_IMAGE_TYPE_QCOW2"]}
    spec, steps = _run(_spec(disk_format="qcow2"))
    assert "COMPUTE_IMAGE_TYPE_QCOW2" not in spec.root_required
    spec, steps = _run(_spec(disk_format="qcow2", is_bfv=True), scheduler=on)
    assert not steps["require_image_type_support"].ran
    spec, steps = _run(_spec(disk_format="weird"), scheduler=on)
    assert not steps["require_image_type_support"].ran and not steps[
        "require_image_type_support"].added


# -- compute_status_filter (always) ---------------------------------------------------

def test_compute_status_is_always_forbidden():
    spec, steps = _run(_spec(), scheduler={"image_metadata_prefilter": False})
    assert steps["compute_status_filter"].ran
    assert "COMPUTE_STATUS_DISABLED" in spec.root_forbidden


# -- isolate_aggregates ---------------------------------------------------------------

def test_isolated_aggregates_forbid_those_whose_trait_is_not_required():
    on = {"enable_isolated_aggregate_filtering": True}
    spec, steps = _run(_spec({"trait:CUSTOM_GPU": "required"}), scheduler=on)
    assert steps["isolate_aggregates"].added == {"forbidden_aggregates": ["agg-ssd"]}
    spec, steps = _run(_spec(props={"traits_required": ["CUSTOM_GPU", "CUSTOM_SSD"]}),
                       scheduler=on)
    assert not steps["isolate_aggregates"].added
    spec, steps = _run(_spec({"trait:CUSTOM_GPU": "required"}))
    assert not steps["isolate_aggregates"].ran and spec.requested_destination is None


# -- transform_image_metadata -------------------------------------------------------

def test_image_metadata_becomes_traits_when_enabled():
    props = {"hw_disk_bus": "virtio", "hw_architecture": "x86_64", "hw_vif_model": "e1000e",
             "hw_video_model": "virtio", "hw_emulation_architecture": "aarch64"}
    spec, steps = _run(_spec(props=props), scheduler={"image_metadata_prefilter": True})
    assert set(steps["transform_image_metadata"].added["root_required"]) == {
        "COMPUTE_STORAGE_BUS_VIRTIO", "HW_ARCH_X86_64", "COMPUTE_NET_VIF_MODEL_E1000E",
        "COMPUTE_GRAPHICS_MODEL_VIRTIO", "COMPUTE_ARCH_AARCH64"}
    spec, steps = _run(_spec(props=props))
    assert not steps["transform_image_metadata"].ran and spec.root_required == {"OWNER_NOVA"}


def test_viommu_model_makes_nova_add_no_image_trait_at_all():
    """nova builds ``COMPUTE_VIOMMU_<model>``, which os-traits does not define
    (its traits are ``COMPUTE_VIOMMU_MODEL_*``), so the filter gives up and adds
    none of the image's traits."""
    spec, steps = _run(_spec(props={"hw_disk_bus": "virtio", "hw_viommu_model": "intel"}),
                       scheduler={"image_metadata_prefilter": True})
    assert not steps["transform_image_metadata"].ran
    assert "COMPUTE_STORAGE_BUS_VIRTIO" not in spec.root_required


def test_image_metadata_with_an_unknown_trait_adds_nothing():
    spec, steps = _run(_spec(props={"hw_disk_bus": "virtio", "hw_cdrom_bus": "nonsense"}),
                       scheduler={"image_metadata_prefilter": True})
    assert not steps["transform_image_metadata"].ran
    assert "COMPUTE_STORAGE_BUS_VIRTIO" not in spec.root_required


# -- accelerators_filter ----------------------------------------------------------------

def test_accelerators_require_the_trait_only_for_device_profiles():
    class Resolver:
        def get_device_profile_request_groups(self, name):
            return [RequestGroup(requester_id="device_profile_0", resources={"FPGA": 1})]

    spec, steps = _run(_spec({"accel:device_profile": "dp"}), resolver=Resolver())
    assert steps["accelerators_filter"].added == {
        "root_required": ["COMPUTE_ACCELERATORS"], "request_groups": ["device_profile_0"]}
    spec, steps = _run(_spec())
    assert "COMPUTE_ACCELERATORS" not in spec.root_required


# -- packed_virtqueue_filter -------------------------------------------------------------

@pytest.mark.parametrize(("extra", "props", "wanted"), [
    ({"hw:virtio_packed_ring": "true"}, {}, True),
    ({}, {"hw_virtio_packed_ring": "yes"}, True),
    ({"hw:virtio_packed_ring": "false"}, {}, False),
    ({}, {}, False),
])
def test_packed_virtqueue(extra, props, wanted):
    spec, _ = _run(_spec(extra, props))
    assert ("COMPUTE_NET_VIRTIO_PACKED" in spec.root_required) is wanted


def test_packed_virtqueue_conflict_refuses():
    with pytest.raises(RequestFilterFailed, match="conflicts"):
        _run(_spec({"hw:virtio_packed_ring": "true"}, {"hw_virtio_packed_ring": "false"}))


# -- routed_networks_filter ------------------------------------------------------------

def test_routed_networks_require_segment_aggregates_per_nic():
    on = {"query_placement_for_routed_network_aggregates": True}
    nics = [RequestedNetwork(network_id="n1"), RequestedNetwork(port_id="p-fixed"),
            RequestedNetwork(port_id="p-free")]
    spec, steps = _run(_spec(requested_networks=nics), scheduler=on, networks=Neutron())
    assert spec.requested_destination.aggregates == ["seg-a,seg-b", "seg-a", "seg-c"]
    assert steps["routed_networks_filter"].added == {"member_of": ["seg-a,seg-b", "seg-a",
                                                                   "seg-c"]}
    spec, steps = _run(_spec(requested_networks=nics), networks=Neutron())
    assert not steps["routed_networks_filter"].ran and spec.requested_destination is None
    spec, steps = _run(_spec(), scheduler=on, networks=Neutron())
    assert steps["routed_networks_filter"].ran and spec.requested_destination is None
    with pytest.raises(RequestFilterFailed, match="network broken"):
        _run(_spec(requested_networks=[RequestedNetwork(network_id="broken")]), scheduler=on,
             networks=Neutron())


# -- remote_managed_ports_filter ----------------------------------------------------------

def test_remote_managed_ports():
    spec, steps = _run(_spec(requested_networks=[RequestedNetwork(port_id="p-dpu")]),
                       networks=Neutron())
    assert steps["remote_managed_ports_filter"].added == {
        "root_required": ["COMPUTE_REMOTE_MANAGED_PORTS"]}
    spec, steps = _run(_spec(requested_networks=[RequestedNetwork(port_id="p-free")]),
                       networks=Neutron())
    assert "COMPUTE_REMOTE_MANAGED_PORTS" not in spec.root_required


# -- ephemeral_encryption_filter ------------------------------------------------------------

def test_ephemeral_encryption_and_its_format():
    spec, steps = _run(_spec({"hw:ephemeral_encryption": "true",
                              "hw:ephemeral_encryption_format": "luks"}))
    assert steps["ephemeral_encryption_filter"].added == {"root_required": [
        "COMPUTE_EPHEMERAL_ENCRYPTION", "COMPUTE_EPHEMERAL_ENCRYPTION_LUKS"]}
    spec, steps = _run(_spec(props={"hw_ephemeral_encryption": True}))
    assert steps["ephemeral_encryption_filter"].added == {
        "root_required": ["COMPUTE_EPHEMERAL_ENCRYPTION"]}
    spec, steps = _run(_spec())
    assert not steps["ephemeral_encryption_filter"].ran
    with pytest.raises(RequestFilterFailed, match="Invalid ephemeral encryption format"):
        _run(_spec({"hw:ephemeral_encryption": "true",
                    "hw:ephemeral_encryption_format": "rot13"}))


# -- virtio_sound_filter -------------------------------------------------------------------

def test_virtio_sound_only_for_the_virtio_model():
    spec, steps = _run(_spec({"hw:sound_model": "virtio"}))
    assert steps["virtio_sound_filter"].added == {"root_required": ["COMPUTE_SOUND_MODEL_VIRTIO"]}
    spec, steps = _run(_spec({"hw:sound_model": "ich9"}))
    assert not steps["virtio_sound_filter"].ran
    with pytest.raises(RequestFilterFailed, match="sound"):
        _run(_spec({"hw:sound_model": "kazoo"}))


# -- tpm_secret_security_filter ---------------------------------------------------------------

@pytest.mark.parametrize(("extra", "trait"), [
    ({"hw:tpm_version": "2.0"}, "COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER"),
    ({"hw:tpm_version": "2.0", "hw:tpm_secret_security": "host"},
     "COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST"),
    ({"hw:tpm_version": "1.2", "hw:tpm_secret_security": "deployment"},
     "COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT"),
])
def test_tpm_secret_security(extra, trait):
    spec, steps = _run(_spec(extra))
    assert steps["tpm_secret_security_filter"].added == {"root_required": [trait]}


def test_tpm_secret_security_off_without_vtpm_and_refusals():
    spec, steps = _run(_spec({"hw:tpm_secret_security": "host"}))
    assert not steps["tpm_secret_security_filter"].ran
    with pytest.raises(RequestFilterFailed, match="not supported"):
        _run(_spec({"hw:tpm_version": "2.0", "hw:tpm_secret_security": "cloud"}))
    with pytest.raises(RequestFilterFailed, match="CRB"):
        _run(_spec({"hw:tpm_version": "1.2", "hw:tpm_model": "tpm-crb"}))


# -- owner_nova_filter ----------------------------------------------------------------------

def test_owner_nova_follows_the_minimum_compute_version():
    spec, steps = _run(version=73)
    assert steps["owner_nova_filter"].added == {"root_required": ["OWNER_NOVA"]}
    spec, steps = _run(version=72)
    assert not steps["owner_nova_filter"].ran and "OWNER_NOVA" not in spec.root_required
    already = RequestSpec(root_required={"OWNER_NOVA"})
    spec, steps = _run(already, version=1)
    assert steps["owner_nova_filter"].ran and not steps["owner_nova_filter"].added

"""The request pre-filters that add or forbid traits (prefilters/traits.py)."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.prefilters import RequestFilterFailed
from tests.unit.nova_reshape.scheduler.prefilters.helpers import (
    make_spec,
    run_filters,
)

# -- require_image_type_support -----------------------------------------------------

def test_image_type_support_on_off_and_boot_from_volume():
    on = {"query_placement_for_image_type_support": True}
    spec, steps = run_filters(make_spec(disk_format="qcow2"), scheduler=on)
    assert steps["require_image_type_support"].added == {
        "root_required": ["COMPUTE_IMAGE_TYPE_QCOW2"]}
    spec, steps = run_filters(make_spec(disk_format="qcow2"))
    assert "COMPUTE_IMAGE_TYPE_QCOW2" not in spec.root_required
    spec, steps = run_filters(make_spec(disk_format="qcow2", is_bfv=True), scheduler=on)
    assert not steps["require_image_type_support"].ran
    spec, steps = run_filters(make_spec(disk_format="weird"), scheduler=on)
    assert not steps["require_image_type_support"].ran and not steps[
        "require_image_type_support"].added


# -- compute_status_filter (always) ---------------------------------------------------

def test_compute_status_is_always_forbidden():
    spec, steps = run_filters(make_spec(), scheduler={"image_metadata_prefilter": False})
    assert steps["compute_status_filter"].ran
    assert "COMPUTE_STATUS_DISABLED" in spec.root_forbidden


# -- transform_image_metadata -------------------------------------------------------

def test_image_metadata_becomes_traits_when_enabled():
    props = {"hw_disk_bus": "virtio", "hw_architecture": "x86_64", "hw_vif_model": "e1000e",
             "hw_video_model": "virtio", "hw_emulation_architecture": "aarch64"}
    spec, steps = run_filters(make_spec(props=props), scheduler={"image_metadata_prefilter": True})
    assert set(steps["transform_image_metadata"].added["root_required"]) == {
        "COMPUTE_STORAGE_BUS_VIRTIO", "HW_ARCH_X86_64", "COMPUTE_NET_VIF_MODEL_E1000E",
        "COMPUTE_GRAPHICS_MODEL_VIRTIO", "COMPUTE_ARCH_AARCH64"}
    spec, steps = run_filters(make_spec(props=props))
    assert not steps["transform_image_metadata"].ran and spec.root_required == {"OWNER_NOVA"}


def test_viommu_model_makes_nova_add_no_image_trait_at_all():
    """nova builds ``COMPUTE_VIOMMU_<model>``, which os-traits does not define
    (its traits are ``COMPUTE_VIOMMU_MODEL_*``), so the filter gives up and adds
    none of the image's traits."""
    spec, steps = run_filters(make_spec(props={"hw_disk_bus": "virtio",
                                                 "hw_viommu_model": "intel"}),
                              scheduler={"image_metadata_prefilter": True})
    assert not steps["transform_image_metadata"].ran
    assert "COMPUTE_STORAGE_BUS_VIRTIO" not in spec.root_required


def test_image_metadata_with_an_unknown_trait_adds_nothing():
    spec, steps = run_filters(make_spec(props={"hw_disk_bus": "virtio",
                                                 "hw_cdrom_bus": "nonsense"}),
                              scheduler={"image_metadata_prefilter": True})
    assert not steps["transform_image_metadata"].ran
    assert "COMPUTE_STORAGE_BUS_VIRTIO" not in spec.root_required


# -- packed_virtqueue_filter -------------------------------------------------------------

@pytest.mark.parametrize(("extra", "props", "wanted"), [
    ({"hw:virtio_packed_ring": "true"}, {}, True),
    ({}, {"hw_virtio_packed_ring": "yes"}, True),
    ({"hw:virtio_packed_ring": "false"}, {}, False),
    ({}, {}, False),
])
def test_packed_virtqueue(extra, props, wanted):
    spec, _ = run_filters(make_spec(extra, props))
    assert ("COMPUTE_NET_VIRTIO_PACKED" in spec.root_required) is wanted


def test_packed_virtqueue_conflict_refuses():
    with pytest.raises(RequestFilterFailed, match="conflicts"):
        run_filters(make_spec({"hw:virtio_packed_ring": "true"},
                              {"hw_virtio_packed_ring": "false"}))


# -- ephemeral_encryption_filter ------------------------------------------------------------

def test_ephemeral_encryption_and_its_format():
    spec, steps = run_filters(make_spec({"hw:ephemeral_encryption": "true",
                                          "hw:ephemeral_encryption_format": "luks"}))
    assert steps["ephemeral_encryption_filter"].added == {"root_required": [
        "COMPUTE_EPHEMERAL_ENCRYPTION", "COMPUTE_EPHEMERAL_ENCRYPTION_LUKS"]}
    spec, steps = run_filters(make_spec(props={"hw_ephemeral_encryption": True}))
    assert steps["ephemeral_encryption_filter"].added == {
        "root_required": ["COMPUTE_EPHEMERAL_ENCRYPTION"]}
    spec, steps = run_filters(make_spec())
    assert not steps["ephemeral_encryption_filter"].ran
    with pytest.raises(RequestFilterFailed, match="Invalid ephemeral encryption format"):
        run_filters(make_spec({"hw:ephemeral_encryption": "true",
                                "hw:ephemeral_encryption_format": "rot13"}))


# -- virtio_sound_filter -------------------------------------------------------------------

def test_virtio_sound_only_for_the_virtio_model():
    spec, steps = run_filters(make_spec({"hw:sound_model": "virtio"}))
    assert steps["virtio_sound_filter"].added == {"root_required": ["COMPUTE_SOUND_MODEL_VIRTIO"]}
    spec, steps = run_filters(make_spec({"hw:sound_model": "ich9"}))
    assert not steps["virtio_sound_filter"].ran
    with pytest.raises(RequestFilterFailed, match="sound"):
        run_filters(make_spec({"hw:sound_model": "kazoo"}))


# -- tpm_secret_security_filter ---------------------------------------------------------------

@pytest.mark.parametrize(("extra", "trait"), [
    ({"hw:tpm_version": "2.0"}, "COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER"),
    ({"hw:tpm_version": "2.0", "hw:tpm_secret_security": "host"},
     "COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST"),
    ({"hw:tpm_version": "1.2", "hw:tpm_secret_security": "deployment"},
     "COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT"),
])
def test_tpm_secret_security(extra, trait):
    spec, steps = run_filters(make_spec(extra))
    assert steps["tpm_secret_security_filter"].added == {"root_required": [trait]}


def test_tpm_secret_security_off_without_vtpm_and_refusals():
    spec, steps = run_filters(make_spec({"hw:tpm_secret_security": "host"}))
    assert not steps["tpm_secret_security_filter"].ran
    with pytest.raises(RequestFilterFailed, match="not supported"):
        run_filters(make_spec({"hw:tpm_version": "2.0", "hw:tpm_secret_security": "cloud"}))
    with pytest.raises(RequestFilterFailed, match="CRB"):
        run_filters(make_spec({"hw:tpm_version": "1.2", "hw:tpm_model": "tpm-crb"}))

"""Pre-filters that require or forbid traits on the root (compute node) provider.

Each maps something the flavor or image asks for to the trait a capable
compute reports: the image's disk format, selected image properties, the
disabled status, packed virtqueues, ephemeral encryption (and its format),
virtio sound and the vTPM secret security. Conflicting flavor/image values
refuse the request.
"""

from __future__ import annotations

import os_traits

from nova_reshape.scheduler.image import flexible_bool
from nova_reshape.scheduler.numa import flavor_image_values
from nova_reshape.scheduler.prefilters.base import (
    PrefilterContext,
    RequestFilterFailed,
    flavor_or_image,
)
from nova_reshape.scheduler.request_spec import RequestSpec

#: Image property -> trait prefix (transform_image_metadata).
IMAGE_TRAIT_PREFIXES = {
    "hw_cdrom_bus": "COMPUTE_STORAGE_BUS",
    "hw_disk_bus": "COMPUTE_STORAGE_BUS",
    "hw_video_model": "COMPUTE_GRAPHICS_MODEL",
    "hw_vif_model": "COMPUTE_NET_VIF_MODEL",
    "hw_architecture": "HW_ARCH",
    "hw_emulation_architecture": "COMPUTE_ARCH",
    "hw_viommu_model": "COMPUTE_VIOMMU",
}
EPHEMERAL_FORMATS = ("plain", "luks", "luksv2")
SOUND_MODELS = ("sb16", "es1370", "pcspk", "ac97", "ich6", "ich9", "usb", "virtio")
TPM_VERSIONS = ("1.2", "2.0")
TPM_MODELS = ("tpm-tis", "tpm-crb")
TPM_SECRET_SECURITY = {
    "user": os_traits.COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER,
    "host": os_traits.COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST,
    "deployment": os_traits.COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT,
}


def require_image_type_support(spec: RequestSpec, context: PrefilterContext) -> bool:
    """``COMPUTE_IMAGE_TYPE_<disk_format>``, unless booting from volume."""
    if not context.conf.scheduler.query_placement_for_image_type_support or spec.is_bfv:
        return False
    if not spec.image.disk_format:
        return False
    trait = f"COMPUTE_IMAGE_TYPE_{spec.image.disk_format.upper()}"
    if not hasattr(os_traits, trait):
        return False  # nova logs "is os-traits up to date?" and adds nothing
    spec.root_required.add(trait)
    return True


def compute_status_filter(spec: RequestSpec, context: PrefilterContext) -> bool:
    """Always: no compute whose service is disabled."""
    spec.root_forbidden.add(os_traits.COMPUTE_STATUS_DISABLED)
    return True


def transform_image_metadata(spec: RequestSpec, context: PrefilterContext) -> bool:
    """Image properties -> traits; one unknown trait and nova adds none at all."""
    if not context.conf.scheduler.image_metadata_prefilter:
        return False
    traits = []
    for key, prefix in IMAGE_TRAIT_PREFIXES.items():
        if key in spec.image.properties:
            value = str(spec.image.properties[key]).replace("-", "_").upper()
            trait = f"{prefix}_{value}"
            if not hasattr(os_traits, trait):
                return False
            traits.append(trait)
    spec.root_required.update(traits)
    return True


def _requested(spec: RequestSpec, key: str) -> bool:
    """``hw:<key>`` / ``hw_<key>`` as booleans; explicitly different values refuse."""
    flavor_value, image_value = flavor_image_values(
        spec.flavor.extra_specs, spec.image.properties, key)
    flavor_on = None if flavor_value is None else flexible_bool(flavor_value)
    image_on = None if image_value is None else flexible_bool(image_value)
    if flavor_on is not None and image_on is not None and flavor_on != image_on:
        raise RequestFilterFailed(
            f"flavor hw:{key}={flavor_value} conflicts with image hw_{key}={image_value}")
    return bool(flavor_on or image_on)


def packed_virtqueue_filter(spec: RequestSpec, context: PrefilterContext) -> bool:
    if _requested(spec, "virtio_packed_ring"):
        spec.root_required.add(os_traits.COMPUTE_NET_VIRTIO_PACKED)
    return True


def ephemeral_encryption_filter(spec: RequestSpec, context: PrefilterContext) -> bool:
    if not _requested(spec, "ephemeral_encryption"):
        return False
    spec.root_required.add(os_traits.COMPUTE_EPHEMERAL_ENCRYPTION)
    eph_format = flavor_or_image(spec, "ephemeral_encryption_format")
    if eph_format:
        if eph_format not in EPHEMERAL_FORMATS:
            raise RequestFilterFailed(
                f"Invalid ephemeral encryption format {eph_format}. "
                f"Allowed values: {', '.join(EPHEMERAL_FORMATS)}")
        spec.root_required.add(f"COMPUTE_EPHEMERAL_ENCRYPTION_{eph_format.upper()}")
    return True


def virtio_sound_filter(spec: RequestSpec, context: PrefilterContext) -> bool:
    model = flavor_or_image(spec, "sound_model")
    if model and model not in SOUND_MODELS:
        raise RequestFilterFailed(f"Invalid sound device model {model!r}")
    if model != "virtio":
        return False
    spec.root_required.add(os_traits.COMPUTE_SOUND_MODEL_VIRTIO)
    return True


def _has_vtpm(spec: RequestSpec) -> bool:
    """nova's get_vtpm_constraint is not None (raising on invalid values)."""
    version = flavor_or_image(spec, "tpm_version")
    if version is None:
        return False
    if version not in TPM_VERSIONS:
        raise RequestFilterFailed(f"Invalid TPM version {version!r}")
    model = flavor_or_image(spec, "tpm_model")
    if model is not None and model not in TPM_MODELS:
        raise RequestFilterFailed(f"Invalid TPM model {model!r}")
    if model == "tpm-crb" and version != "2.0":
        raise RequestFilterFailed("TPM model CRB is only valid with TPM version 2.0.")
    return True


def tpm_secret_security_filter(spec: RequestSpec, context: PrefilterContext) -> bool:
    """The flavor's ``hw:tpm_secret_security`` (default ``user``) for vTPM guests."""
    if not _has_vtpm(spec):
        return False
    security = spec.flavor.extra_specs.get("hw:tpm_secret_security") or "user"
    if security not in TPM_SECRET_SECURITY:
        raise RequestFilterFailed(f"TPM secret security '{security}' is not supported.")
    spec.root_required.add(TPM_SECRET_SECURITY[security])
    return True

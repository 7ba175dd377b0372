"""What an instance's embedded flavor asks of Placement, by nova's rules.

nova's ``heal_allocations`` builds an instance's allocation from the flavor
stored with it (``instance_extra.flavor``), the way its scheduler utilities
turn a flavor into resources: the flavor's ``resources*`` extra specs, a
dedicated CPU policy as ``PCPU`` (no ``VCPU``), memory encryption, and
``VCPU``/``MEMORY_MB``/``DISK_GB`` from the flavor's sizes, where a
volume-backed instance's root disk is not counted. That translation is
:func:`nova_reshape.scheduler.resource_request.from_request_spec` (one home);
this module only asks it with the instance's flavor and disk kind, and
names the flavors nova refuses to heal.
"""

from __future__ import annotations

import enum

from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.scheduler.request_spec import RequestSpec
from nova_reshape.scheduler.resource_request import (
    ResourceRequest,
    ResourceRequestError,
    from_request_spec,
)

#: The extra specs nova checks, in its order, before it reads an instance's allocations.
VGPU_SPEC = "resources:VGPU"
DEVICE_PROFILE_SPEC = "accel:device_profile"


class Unhealable(enum.Enum):
    """Why nova 34 stops ``heal_allocations`` at an instance (exit status 8)."""

    VGPU = "vgpu"
    DEVICE_PROFILE = "device_profile"


class FlavorError(Exception):
    """The embedded flavor is missing or cannot be turned into resources."""


def unhealable(instance: InstanceRecord) -> Unhealable | None:
    """What nova refuses to heal in this instance's flavor: a (non-empty) unnumbered
    ``resources:VGPU`` first, then a Cyborg device profile; None otherwise."""
    specs = instance.extra_specs
    if specs.get(VGPU_SPEC):
        return Unhealable.VGPU
    if specs.get(DEVICE_PROFILE_SPEC):
        return Unhealable.DEVICE_PROFILE
    return None


def flavor_request(instance: InstanceRecord, volume_backed: bool) -> ResourceRequest:
    """The request groups of the instance's current embedded flavor (no image, no ports,
    no device profiles, no PCI: what nova's flavor-to-resources helper sees)."""
    if instance.flavor is None:
        raise FlavorError(f"instance {instance.uuid} has no embedded flavor "
                          "(instance_extra.flavor)")
    try:
        return from_request_spec(RequestSpec(flavor=instance.flavor.cur,
                                             is_bfv=volume_backed))
    except (ResourceRequestError, ValueError) as error:
        raise FlavorError(f"instance {instance.uuid}: its flavor cannot be turned into "
                          f"resources: {error}") from error


def flavor_resources(instance: InstanceRecord, volume_backed: bool) -> dict[str, int]:
    """Amount per resource class, every group merged: what nova writes on the compute
    node provider."""
    return flavor_request(instance, volume_backed).merged_resources()

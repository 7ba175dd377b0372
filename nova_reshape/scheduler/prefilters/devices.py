"""Pre-filters about devices: accelerators and nova ownership.

* ``accelerators_filter``: a flavor with ``accel:device_profile`` requires
  ``COMPUTE_ACCELERATORS`` on the root; the profile's request groups are
  resolved here once per request (``device_profile_<N>``), as nova's
  conductor does before it calls the scheduler.
* ``owner_nova_filter``: once every nova-compute is at service version 73
  (nova 34), ``OWNER_NOVA`` is required on the root, and the Placement query
  builder adds it to the PCI request groups too (with ``pci_in_placement``),
  so a Cyborg- or otherwise-owned provider is never picked.
"""

from __future__ import annotations

import os_traits

from nova_reshape.accelerator.device_profile import DeviceProfileError
from nova_reshape.scheduler.accelerator_seam import (
    GROUP_PREFIX,
    DeviceProfileResolver,
    as_request_group,
    device_profile_name,
)
from nova_reshape.scheduler.prefilters.base import (
    MIN_COMPUTE_VERSION_OWNER_TRAIT,
    PrefilterContext,
    RequestFilterFailed,
)
from nova_reshape.scheduler.request_spec import RequestSpec


def accelerators(spec: RequestSpec, resolver: DeviceProfileResolver | None) -> bool:
    """Require COMPUTE_ACCELERATORS and add the device profile's groups (once)."""
    name = device_profile_name(spec.flavor.extra_specs)
    if name is None:
        return True
    spec.root_required.add(os_traits.COMPUTE_ACCELERATORS)
    if any((group.requester_id or "").startswith(GROUP_PREFIX)
           for group in spec.requested_resources):
        return True
    if resolver is None:
        raise RequestFilterFailed(
            f"flavor asks for device profile {name} but no accelerator service is configured")
    try:
        groups = [as_request_group(g) for g in resolver.get_device_profile_request_groups(name)]
    except DeviceProfileError as error:
        # its message names the profile already
        raise RequestFilterFailed(str(error)) from error
    except Exception as error:
        raise RequestFilterFailed(f"device profile {name}: {error}") from error
    if not groups:
        raise RequestFilterFailed(f"device profile {name} has no request group")
    spec.requested_resources.extend(groups)
    return True


def accelerators_filter(spec: RequestSpec, context: PrefilterContext) -> bool:
    return accelerators(spec, context.resolver)


def owner_nova_applies(context: PrefilterContext) -> bool:
    """Every nova-compute is new enough to report OWNER_NOVA (unknown = nova 34)."""
    version = context.min_compute_version
    return version is None or version >= MIN_COMPUTE_VERSION_OWNER_TRAIT


def owner_nova_filter(spec: RequestSpec, context: PrefilterContext) -> bool:
    if os_traits.OWNER_NOVA in spec.root_required:
        return True
    if not owner_nova_applies(context):
        return False
    spec.root_required.add(os_traits.OWNER_NOVA)
    return True

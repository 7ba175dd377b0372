"""The RequestSpec of a live explain, built from command-line values as nova builds it.

The flavor (name, vCPUs, RAM, disk, extra specs) and the image properties
become nova's RequestSpec: image properties are coerced as ImageMetaProps,
the guest NUMA topology and PCI requests are derived with nova's rules, and
the request pre-filters then add what they add. The Placement query is the
one nova sends for that spec.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler import image as image_mod
from nova_reshape.scheduler import numa as numa_mod
from nova_reshape.scheduler import pci as pci_mod
from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler import resource_request as rr
from nova_reshape.scheduler.accelerator_seam import DeviceProfileResolver
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.request_spec import ImageMeta, RequestSpec


@dataclass(frozen=True)
class LiveRequest:
    """What the operator asked for (the command line's request half)."""

    vcpus: int
    ram_mb: int
    disk_gb: int
    flavor_name: str = "flavor"
    ephemeral_gb: int = 0
    swap_mb: int = 0
    extra_specs: Mapping[str, str] | None = None
    image_properties: Mapping[str, Any] | None = None
    availability_zone: str | None = None
    project_id: str = "project"


def parse_json_object(text: str | None, what: str) -> dict[str, Any]:
    """A JSON object given on the command line (ScenarioError otherwise)."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ScenarioError(f"{what} is not valid JSON: {error}") from error
    if not isinstance(value, dict):
        raise ScenarioError(f"{what} must be a JSON object")
    return value


def build_spec(live: LiveRequest, conf: SchedulerConfig) -> RequestSpec:
    """nova's RequestSpec for the request (before pre-filters)."""
    for value, what in ((live.vcpus, "--vcpus"), (live.ram_mb, "--ram"), (live.disk_gb, "--disk")):
        if value < 0 or (what != "--disk" and value < 1):
            raise ScenarioError(f"{what} must be a positive integer, got {value}")
    extra_specs = {str(k): str(v) for k, v in (live.extra_specs or {}).items()}
    flavor = Flavor(name=live.flavor_name, vcpus=live.vcpus, memory_mb=live.ram_mb,
                    root_gb=live.disk_gb, ephemeral_gb=live.ephemeral_gb, swap=live.swap_mb,
                    extra_specs=extra_specs)
    return spec_for_flavor(flavor, conf, live.image_properties, project_id=live.project_id,
                           availability_zone=live.availability_zone)


def spec_for_flavor(flavor: Flavor, conf: SchedulerConfig,
                    image_properties: Mapping[str, Any] | None = None, *,
                    project_id: str = "project",
                    availability_zone: str | None = None) -> RequestSpec:
    """nova's RequestSpec of a boot of ``flavor`` (before pre-filters): image
    properties coerced, PCI requests from its aliases (``[pci] alias`` of
    ``conf``), the guest NUMA topology nova derives from its extra specs."""
    extra_specs = {str(k): str(v) for k, v in flavor.extra_specs.items()}
    image = ImageMeta(properties=image_mod.image_properties(image_properties or {}))
    return RequestSpec(
        flavor=flavor, image=image, project_id=project_id,
        availability_zone=availability_zone,
        pci_requests=pci_mod.requests_from_flavor(extra_specs, conf.pci_aliases),
        numa_topology=numa_mod.numa_get_constraints(flavor.vcpus, flavor.memory_mb,
                                                    extra_specs, image.properties))


def placement_requests(spec: RequestSpec, conf: SchedulerConfig,
                       aggregates: list[Aggregate], require_owner_nova: bool | None = None,
                       resolver: DeviceProfileResolver | None = None,
                       ) -> tuple[list[rr.ResourceRequest], list[prefilters.PrefilterStep]]:
    """Run the pre-filters on ``spec`` and build nova's candidates queries.

    One query, or two when CPU pinning asked for ``PCPU``: nova then also
    asks with ``VCPU`` instead (unless ``[workarounds]
    disable_fallback_pcpu_query``) and merges the answers. Raises
    RequestFilterFailed (its ``steps`` say which filter refused).
    ``require_owner_nova``: as :func:`~nova_reshape.scheduler.prefilters.run_prefilters`
    (None: every compute is nova 34's, ``OWNER_NOVA`` required); ``resolver``:
    the device profiles of ``accel:device_profile`` (None: no accelerator
    service, such a flavor is refused).
    """
    steps = prefilters.run_prefilters(spec, aggregates=aggregates, conf=conf,
                                      require_owner_nova=require_owner_nova,
                                      resolver=resolver)

    def build(translate_pinning: bool) -> rr.ResourceRequest:
        return rr.from_request_spec(
            spec, max_placement_results=conf.scheduler.max_placement_results,
            translate_pinning=translate_pinning,
            pci_in_placement=conf.filter_scheduler.pci_in_placement,
            require_owner_nova="OWNER_NOVA" in spec.root_required)

    requests = [build(True)]
    if requests[0].cpu_pinning_requested and not conf.workarounds.disable_fallback_pcpu_query:
        requests.append(build(False))
    return requests, steps

"""Image-driven filters: hypervisor compatibility and image/host isolation."""

from __future__ import annotations

from nova_reshape.scheduler import image as image_mod
from nova_reshape.scheduler.filters.base import HostCheck, PreparedHostFilter
from nova_reshape.scheduler.request_spec import RequestSpec


class ImagePropertiesFilter(PreparedHostFilter):
    """Keeps hosts whose supported instances cover the image's arch / hv_type / vm_mode.

    Without any of ``hw_architecture`` (or the configured default),
    ``img_hv_type`` and ``hw_vm_mode`` every host passes, and
    ``img_hv_requested_version`` is not checked. Otherwise a
    ``[arch, hv_type, vm_mode]`` entry must contain each requested value and
    the hypervisor version (when non-zero) must satisfy the predicate.

    ``hw_maxphysaddr_bits``/``_mode``: nova 34 crashes here (it calls
    ``.get`` on the cpu_info JSON string); this does what was meant and
    compares the host's parsed ``cpu_info.maxphysaddr`` with the request.
    """

    run_filter_once_per_request = True
    RUN_ON_REBUILD = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        props = spec_obj.image.properties
        arch = props.get("hw_architecture") or \
            self.conf.filter_scheduler.image_properties_default_architecture
        wanted = [value for value in (
            image_mod.canonical_arch(arch) if arch else None,
            props.get("img_hv_type"), props.get("hw_vm_mode")) if value]
        wanted_set = frozenset(wanted)
        version_required = props.get("img_hv_requested_version")
        phys_mode = props.get("hw_maxphysaddr_mode")
        phys_bits = props.get("hw_maxphysaddr_bits")
        if not wanted and not (phys_mode or phys_bits):
            return None
        reject = self.reject

        def check(host_state):
            if phys_mode or phys_bits:
                verdict = _check_maxphysaddr(host_state, phys_mode, phys_bits, reject)
                if not verdict:
                    return verdict
            if not wanted:
                return True
            supported = host_state.supported_instances
            if not supported:
                return reject("host reports no supported instances; image needs %s",
                              "/".join(wanted))
            version = host_state.hypervisor_version
            if not any(wanted_set.issubset(entry) for entry in supported):
                return reject("no supported instance of the host offers %s",
                              "/".join(wanted))
            if not (version and version_required):
                return True
            if image_mod.version_satisfies(version_required,
                                           image_mod.version_to_str(version)):
                return True
            return reject("hypervisor version %s does not satisfy %s",
                          image_mod.version_to_str(version), version_required)
        return check


def _check_maxphysaddr(host_state, mode, bits, reject):
    try:
        info = host_state.cpu_info_dict()
    except ValueError:
        info = None
    physaddr = info.get("maxphysaddr") if isinstance(info, dict) else None
    if not isinstance(physaddr, dict):
        return reject("image requests maxphysaddr but the host's cpu_info has none")
    if mode and physaddr.get("mode") is not None and physaddr.get("mode") != mode:
        return reject("host maxphysaddr mode %s, image wants %s", physaddr.get("mode"), mode)
    if bits:
        host_bits = physaddr.get("bits")
        if not isinstance(host_bits, int) or host_bits < int(bits):
            return reject("host maxphysaddr bits %s < requested %s", host_bits, bits)
    return True


class IsolatedHostsFilter(PreparedHostFilter):
    """Keeps isolated images on isolated hosts (and, if restricted, only them there).

    See the facts: with no ``isolated_images`` a host passes when restriction
    is off or it is not isolated; otherwise with restriction
    ``image_isolated == host_isolated``, without it ``not image_isolated or
    host_isolated``.
    """

    run_filter_once_per_request = True
    RUN_ON_REBUILD = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        opts = self.conf.filter_scheduler
        isolated_hosts = frozenset(opts.isolated_hosts)
        isolated_images = frozenset(opts.isolated_images)
        restrict = opts.restrict_isolated_hosts_to_isolated_images
        reject = self.reject
        if not isolated_images:
            if not restrict or not isolated_hosts:
                return None

            def check_no_images(host_state):
                if host_state.host in isolated_hosts:
                    return reject("host is isolated and no image is isolated")
                return True
            return check_no_images
        image_iso = spec_obj.image.id in isolated_images if spec_obj.image.id else False

        def check(host_state):
            host_iso = host_state.host in isolated_hosts
            if restrict:
                ok = image_iso == host_iso
            else:
                ok = not image_iso or host_iso
            if ok:
                return True
            if image_iso:
                return reject("image is isolated and the host is not an isolated host")
            return reject("host is isolated and only takes isolated images")
        return check


class AggregateImagePropertiesIsolation(PreparedHostFilter):
    """Drops hosts whose aggregate metadata lists other values for an image property.

    For each aggregate metadata key (only keys starting with
    ``namespace + separator`` when a namespace is configured) naming an image
    property the request's image has and that is truthy, ``str(property)``
    must be among the comma-split values.
    """

    run_filter_once_per_request = True
    RUN_ON_REBUILD = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        props = spec_obj.image.properties
        if not props:
            return None
        opts = self.conf.filter_scheduler
        namespace = opts.aggregate_image_properties_isolation_namespace
        prefix = namespace + opts.aggregate_image_properties_isolation_separator \
            if namespace else None
        relevant = {key: str(value) for key, value in props.items() if value}
        reject = self.reject

        def check(host_state):
            metadata = host_state.aggregate_metadata
            if not metadata:
                return True
            for key in metadata:
                if prefix and not key.startswith(prefix):
                    continue
                wanted = relevant.get(key)
                if wanted is None:
                    continue
                options = host_state.aggregate_values_split(key)
                if wanted not in options:
                    return reject("image property %s=%s is not among the aggregate values %s",
                                  key, wanted, ", ".join(sorted(options)))
            return True
        return check

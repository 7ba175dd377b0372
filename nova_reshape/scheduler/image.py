"""Image metadata as nova's scheduler sees it.

nova turns Glance properties into an ``ImageMetaProps`` object: unknown
property names are dropped, a few legacy names are mapped to current ones,
typed fields are coerced (integers, flexible booleans) and the three
hypervisor-compatibility enums (architecture, hypervisor type, VM mode) are
canonicalized. Filters and weighers compare against those coerced values,
so ``str(prop)`` of a boolean property is ``"True"``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nova_reshape.nova.hypervisor import ARCHITECTURES, HV_TYPES, VM_MODES
from nova_reshape.scheduler.errors import ScenarioError

_ARCH_ALIASES = {"i386": "i686", "i486": "i686", "i586": "i686", "x86_32": "i686",
                 "x86_32p": "i686", "amd64": "x86_64"}
_HV_ALIASES = {"xapi": "xen"}
_VM_MODE_ALIASES = {"hv": "hvm", "baremetal": "hvm", "pv": "xen"}


def _canonical(kind: str, value: Any, aliases: dict[str, str], valid: frozenset[str]) -> str:
    name = str(value).lower()
    name = aliases.get(name, name)
    if name not in valid:
        raise ScenarioError(f"invalid {kind} {value!r}")
    return name


def canonical_arch(value: Any) -> str:
    """Canonical architecture name (``i386`` -> ``i686``); rejects unknown ones."""
    return _canonical("architecture", value, _ARCH_ALIASES, ARCHITECTURES)


def canonical_hv_type(value: Any) -> str:
    """Canonical hypervisor type (``xapi`` -> ``xen``); rejects unknown ones."""
    return _canonical("hypervisor type", value, _HV_ALIASES, HV_TYPES)


def canonical_vm_mode(value: Any) -> str:
    """Canonical VM mode (``hv`` -> ``hvm``, ``pv`` -> ``xen``); rejects unknown ones."""
    return _canonical("vm mode", value, _VM_MODE_ALIASES, VM_MODES)


_INT_FIELDS = frozenset({
    "hw_cpu_cores", "hw_cpu_sockets", "hw_cpu_max_cores", "hw_cpu_max_sockets",
    "hw_cpu_max_threads", "hw_cpu_threads", "hw_device_id", "hw_numa_nodes",
    "hw_serial_port_count", "hw_video_ram", "img_compression_level", "img_version",
    "hw_maxphysaddr_bits", "hw_redirected_usb_ports",
})
_BOOL_FIELDS = frozenset({
    "hw_boot_menu", "hw_ipxe_boot", "hw_qemu_guest_agent", "hw_vif_multiqueue_enabled",
    "img_bittorrent", "img_bdm_v2", "img_cache_in_nova", "img_linked_clone",
    "img_use_agent", "os_require_quiesce", "os_skip_agent_inject_files_at_boot",
    "os_skip_agent_inject_ssh", "hw_pmu", "hw_time_hpet", "hw_locked_memory",
    "hw_virtio_packed_ring", "hw_mem_encryption", "hw_firmware_stateless",
    "hw_ephemeral_encryption", "img_hide_hypervisor_id",
})
_STR_FIELDS = frozenset({
    "hw_auto_disk_config", "hw_cdrom_bus", "hw_cpu_policy", "hw_cpu_thread_policy",
    "hw_cpu_realtime_mask", "hw_disk_bus", "hw_disk_type", "hw_floppy_bus",
    "hw_firmware_type", "hw_input_bus", "hw_machine_type", "hw_maxphysaddr_mode",
    "hw_mem_encryption_model", "hw_mem_page_size", "hw_pci_numa_affinity_policy",
    "hw_pointer_model", "hw_rescue_bus", "hw_rescue_device", "hw_rng_model",
    "hw_scsi_model", "hw_sound_model", "hw_usb_model", "hw_video_model", "hw_vif_model",
    "hw_watchdog_action", "hw_viommu_model", "hw_tpm_model", "hw_tpm_version",
    "hw_tpm_secret_security", "hw_emulation_architecture",
    "hw_ephemeral_encryption_format", "hw_ephemeral_encryption_secret_uuid",
    "img_config_drive", "img_owner_id", "img_root_device_name", "img_signature",
    "img_signature_hash_method", "img_signature_certificate_uuid",
    "img_signature_key_type", "os_admin_user", "os_command_line", "os_distro",
    "os_secure_boot", "os_type", "img_hv_requested_version",
})
_ENUM_FIELDS = {
    "hw_architecture": canonical_arch,
    "img_hv_type": canonical_hv_type,
    "hw_vm_mode": canonical_vm_mode,
}
_LIST_FIELDS = frozenset({"traits_required", "img_block_device_mapping", "img_mappings"})

#: Every property name nova's ImageMetaProps knows (others are dropped).
IMAGE_PROPERTY_FIELDS = (_INT_FIELDS | _BOOL_FIELDS | _STR_FIELDS | frozenset(_ENUM_FIELDS)
                         | _LIST_FIELDS | frozenset({"hw_numa_cpus", "hw_numa_mem"}))

_LEGACY_NAMES = {
    "architecture": "hw_architecture", "owner_id": "img_owner_id",
    "vmware_disktype": "hw_disk_type", "vmware_image_version": "img_version",
    "vmware_ostype": "os_distro", "auto_disk_config": "hw_auto_disk_config",
    "ipxe_boot": "hw_ipxe_boot", "xenapi_device_id": "hw_device_id",
    "xenapi_image_compression_level": "img_compression_level",
    "vmware_linked_clone": "img_linked_clone", "xenapi_use_agent": "img_use_agent",
    "xenapi_skip_agent_inject_ssh": "os_skip_agent_inject_ssh",
    "xenapi_skip_agent_inject_files_at_boot": "os_skip_agent_inject_files_at_boot",
    "cache_in_nova": "img_cache_in_nova", "vm_mode": "hw_vm_mode",
    "bittorrent": "img_bittorrent", "mappings": "img_mappings",
    "block_device_mapping": "img_block_device_mapping", "bdm_v2": "img_bdm_v2",
    "root_device_name": "img_root_device_name",
    "hypervisor_version_requires": "img_hv_requested_version",
}

_TRUE_STRINGS = frozenset({"1", "t", "true", "on", "y", "yes"})


def flexible_bool(value: Any) -> bool:
    """oslo's lenient boolean: true/yes/on/1/... are True, anything else False."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _TRUE_STRINGS


def _coerce(name: str, value: Any) -> Any:
    try:
        if name in _ENUM_FIELDS:
            return _ENUM_FIELDS[name](value)
        if name in _INT_FIELDS:
            return int(value)
        if name in _BOOL_FIELDS:
            return flexible_bool(value)
        if name in _LIST_FIELDS:
            if not isinstance(value, list):
                raise ValueError("expected a list")
            return list(value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(f"invalid image property {name}={value!r}: {exc}") from exc


def image_properties(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Coerced ImageMetaProps values from Glance-style properties.

    Legacy names are applied first, current names win; ``hw_numa_cpus.N`` /
    ``hw_numa_mem.N`` become lists; anything nova does not know is dropped.
    """
    props: dict[str, Any] = {}
    for legacy, current in _LEGACY_NAMES.items():
        if legacy in raw:
            props[current] = _coerce(current, raw[legacy])
    for name, value in raw.items():
        if name in IMAGE_PROPERTY_FIELDS and value is not None:
            props[name] = _coerce(name, value)
    cpus, mems = [], []
    while f"hw_numa_cpus.{len(cpus)}" in raw:
        cpus.append(str(raw[f"hw_numa_cpus.{len(cpus)}"]))
    while f"hw_numa_mem.{len(mems)}" in raw:
        try:
            mems.append(int(raw[f"hw_numa_mem.{len(mems)}"]))
        except (TypeError, ValueError) as exc:
            raise ScenarioError(f"invalid image property hw_numa_mem: {exc}") from exc
    if cpus:
        props["hw_numa_cpus"] = cpus
    if mems:
        props["hw_numa_mem"] = mems
    return props


def version_to_str(version: int) -> str:
    """nova's integer hypervisor version as a dotted string (8002000 -> "8.2.0")."""
    parts = []
    while version:
        parts.insert(0, str(version % 1000))
        version //= 1000
    return ".".join(parts)


_CLAUSE = re.compile(r"^\s*(<=|>=|==|!=|<|>)\s*([0-9]+(?:\.[0-9]+)*)\s*$")


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = [int(p) for p in text.split(".")]
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


def version_satisfies(predicate: str, version: str) -> bool:
    """Does dotted ``version`` satisfy ``">= 7.0, < 9.0"``?

    Raises ValueError for an unparsable predicate, as nova's
    VersionPredicate does (which aborts the request).
    """
    current = _version_tuple(version) if version else (0, 0, 0)
    for clause in str(predicate).split(","):
        match = _CLAUSE.match(clause)
        if not match:
            raise ValueError(f"invalid version predicate {predicate!r}")
        op, wanted = match.group(1), _version_tuple(match.group(2))
        ok = {"<": current < wanted, "<=": current <= wanted, "==": current == wanted,
              "!=": current != wanted, ">": current > wanted, ">=": current >= wanted}[op]
        if not ok:
            return False
    return True

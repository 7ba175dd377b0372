"""Read the parts of nova.conf the migration and the host-file generator use.

:func:`load_nova_conf` takes nova.conf files (later files win, as
``nova-compute --config-file a --config-file b``) and returns a
:class:`NovaConf`: a frozen record of exactly the options the migration
needs, parsed with oslo.config under nova's group and option names with
nova's defaults. Only these options are registered; the rest of the file
is ignored, as any oslo.config service ignores options it does not know.

Options read (group, name, nova's default):

* ``[pci] report_in_placement`` (False) and ``[pci] device_spec``
  (multi-valued JSON; old name ``[pci] passthrough_whitelist``), parsed
  into :class:`DeviceSpec` records;
* ``[compute] cpu_shared_set`` / ``cpu_dedicated_set`` (unset), and the
  legacy ``[DEFAULT] vcpu_pin_set`` which, like in nova, wins over
  ``cpu_shared_set``;
* ``[devices] enabled_mdev_types`` (empty; old name ``enabled_vgpu_types``);
* ``[DEFAULT] cpu/ram/disk_allocation_ratio`` (unset) and
  ``initial_cpu/ram/disk_allocation_ratio`` (4.0, 1.0, 1.0);
* ``[DEFAULT] reserved_host_memory_mb`` (512), ``reserved_host_cpus`` (0),
  ``reserved_host_disk_mb`` (0).

A file that is missing, unreadable, not INI, or holds a bad value raises
:class:`NovaConfError` with one line naming the file or the option.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from oslo_config import cfg

from nova_reshape.virt.host import canonical_address, parse_cpuset

#: Keys of a device_spec entry that match devices; every other key is a tag.
MATCH_KEYS = frozenset({"vendor_id", "product_id", "address", "devname"})


class NovaConfError(ValueError):
    """nova.conf could not be read or holds a value nova would refuse."""


def _options() -> dict[str | None, list[cfg.Opt]]:
    """The options read, per group (None: DEFAULT), with nova's defaults."""
    return {
        "pci": [
            cfg.BoolOpt("report_in_placement", default=False),
            cfg.MultiStrOpt("device_spec", default=[], deprecated_opts=[
                cfg.DeprecatedOpt("passthrough_whitelist", group="pci")]),
        ],
        "compute": [
            cfg.StrOpt("cpu_shared_set"),
            cfg.StrOpt("cpu_dedicated_set"),
        ],
        "devices": [
            cfg.ListOpt("enabled_mdev_types", default=[], deprecated_opts=[
                cfg.DeprecatedOpt("enabled_vgpu_types", group="devices")]),
        ],
        None: [
            cfg.StrOpt("vcpu_pin_set"),
            cfg.FloatOpt("cpu_allocation_ratio", min=0.0),
            cfg.FloatOpt("ram_allocation_ratio", min=0.0),
            cfg.FloatOpt("disk_allocation_ratio", min=0.0),
            cfg.FloatOpt("initial_cpu_allocation_ratio", default=4.0, min=0.0),
            cfg.FloatOpt("initial_ram_allocation_ratio", default=1.0, min=0.0),
            cfg.FloatOpt("initial_disk_allocation_ratio", default=1.0, min=0.0),
            cfg.IntOpt("reserved_host_memory_mb", default=512, min=0),
            cfg.IntOpt("reserved_host_cpus", default=0, min=0),
            cfg.IntOpt("reserved_host_disk_mb", default=0, min=0),
        ],
    }


@dataclasses.dataclass(frozen=True)
class DeviceSpec:
    """One ``[pci] device_spec`` entry.

    ``vendor_id``/``product_id``: hex strings or ``*`` (None: any).
    ``address``: nova's glob form (``0000:81:00.*``, ``*:0a:00.*``) or, from
    the dict form, per-field regular expressions (``{"bus": "8[12]"}``).
    ``tags``: every other key as written; ``resource_class``, ``traits``
    (comma-separated in nova.conf) and ``physical_network`` are the tags
    Placement reporting uses.
    """

    vendor_id: str | None = None
    product_id: str | None = None
    address: str | None = None
    address_regex: Mapping[str, str] | None = None
    devname: str | None = None
    tags: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def resource_class(self) -> str | None:
        return self.tags.get("resource_class")

    @property
    def traits(self) -> tuple[str, ...]:
        raw = self.tags.get("traits") or ""
        return tuple(trait.strip() for trait in raw.split(",") if trait.strip())

    @property
    def physical_network(self) -> str | None:
        return self.tags.get("physical_network")

    def matches(self, address: str, vendor_id: str, product_id: str) -> bool:
        """Whether a device (``0000:81:00.1``, ``8086``, ``154c``) matches the entry."""
        if self.devname is not None:
            return False  # matched by interface name: not knowable offline
        for wanted, value in ((self.vendor_id, vendor_id), (self.product_id, product_id)):
            if wanted not in (None, "*") and int(wanted, 16) != int(value, 16):
                return False
        fields = _address_fields(address)
        if self.address_regex is not None:
            return all(re.fullmatch(self.address_regex.get(key, ".*"), value)
                       for key, value in fields.items())
        if self.address is None:
            return True
        return all(_glob_field_matches(pattern, fields[key])
                   for key, pattern in _glob_fields(self.address).items())


def _address_fields(address: str) -> dict[str, str]:
    domain, bus, rest = canonical_address(address).split(":")
    slot, function = rest.split(".")
    return {"domain": domain, "bus": bus, "slot": slot, "function": function}


def _glob_fields(pattern: str) -> dict[str, str]:
    """nova's glob address: missing leading parts and empty fields are ``*``."""
    head, _, function = pattern.lower().rpartition(".")
    if not _:
        head, function = pattern.lower(), "*"
    parts = head.split(":")
    parts = ["*"] * (3 - len(parts)) + parts
    domain, bus, slot = (part or "*" for part in parts[-3:])
    return {"domain": domain, "bus": bus, "slot": slot, "function": function or "*"}


def _glob_field_matches(pattern: str, value: str) -> bool:
    if pattern == "*":
        return True
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(value, pattern)
    return int(pattern, 16) == int(value, 16)


@dataclasses.dataclass(frozen=True)
class NovaConf:
    """What the migration reads from nova.conf (see the module docstring).

    CPU sets are None when the option is not set (an empty set when set to
    an empty string). ``sources`` are the files read.
    """

    sources: tuple[str, ...] = ()
    report_in_placement: bool = False
    device_spec: tuple[DeviceSpec, ...] = ()
    cpu_shared_set: frozenset[int] | None = None
    cpu_dedicated_set: frozenset[int] | None = None
    enabled_mdev_types: tuple[str, ...] = ()
    cpu_allocation_ratio: float | None = None
    ram_allocation_ratio: float | None = None
    disk_allocation_ratio: float | None = None
    initial_cpu_allocation_ratio: float = 4.0
    initial_ram_allocation_ratio: float = 1.0
    initial_disk_allocation_ratio: float = 1.0
    reserved_host_memory_mb: int = 512
    reserved_host_cpus: int = 0
    reserved_host_disk_mb: int = 0

    def spec_for(self, address: str, vendor_id: str, product_id: str) -> DeviceSpec | None:
        """The first device_spec entry matching a device (nova uses the first), or None."""
        for spec in self.device_spec:
            if spec.matches(address, vendor_id, product_id):
                return spec
        return None


def parse_device_spec(value: str) -> list[DeviceSpec]:
    """One ``device_spec`` value: a JSON object or a JSON list of them."""
    try:
        document = json.loads(value)
    except ValueError as error:
        raise NovaConfError(f"[pci] device_spec {value!r} is not JSON: {error}") from None
    entries = document if isinstance(document, list) else [document]
    specs = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise NovaConfError(f"[pci] device_spec entry {entry!r} is not a JSON object")
        specs.append(_spec(entry))
    return specs


def _spec(entry: Mapping[str, Any]) -> DeviceSpec:
    where = f"[pci] device_spec {json.dumps(entry, sort_keys=True)}"
    for key in ("vendor_id", "product_id"):
        value = entry.get(key)
        if value is not None and value != "*" and not re.fullmatch(r"[0-9a-fA-F]{1,4}",
                                                                    str(value)):
            raise NovaConfError(f"{where}: {key} {value!r} is not a hex id")
    address = entry.get("address")
    address_regex = None
    if isinstance(address, dict):
        unknown = set(address) - {"domain", "bus", "slot", "function"}
        if unknown:
            raise NovaConfError(f"{where}: address has unknown fields {sorted(unknown)}")
        address_regex = {key: str(value) for key, value in address.items()}
        address = None
    elif address is not None:
        address = str(address)
        try:
            for pattern in _glob_fields(address).values():
                if pattern != "*" and not any(char in pattern for char in "*?["):
                    int(pattern, 16)
        except ValueError:
            raise NovaConfError(f"{where}: address {address!r} is not a PCI address "
                                "pattern") from None
    tags = {key: str(value) if not isinstance(value, bool) else str(value).lower()
            for key, value in entry.items() if key not in MATCH_KEYS}
    return DeviceSpec(
        vendor_id=str(entry["vendor_id"]).lower() if entry.get("vendor_id") else None,
        product_id=str(entry["product_id"]).lower() if entry.get("product_id") else None,
        address=address, address_regex=address_regex, devname=entry.get("devname"),
        tags=tags)


def _cpuset(value: str | None, key: str) -> frozenset[int] | None:
    if value is None:
        return None
    try:
        return parse_cpuset(value)
    except ValueError as error:
        raise NovaConfError(f"{key} {value!r}: {error}") from None


def load_nova_conf(files: Sequence[str]) -> NovaConf:
    """Parse nova.conf ``files`` (later ones win) into a :class:`NovaConf`.

    Raises :class:`NovaConfError` (one line) for a missing or malformed file
    or a bad value.
    """
    conf = cfg.ConfigOpts()
    for group, options in _options().items():
        conf.register_opts(options, group=group)
    try:
        conf(args=[], project="nova", default_config_files=list(files),
             default_config_dirs=[])
        pci, compute, devices = conf.pci, conf.compute, conf.devices
        values = {
            "report_in_placement": pci.report_in_placement,
            "device_spec": tuple(spec for value in pci.device_spec
                                 for spec in parse_device_spec(value)),
            "cpu_shared_set": _cpuset(conf.vcpu_pin_set, "[DEFAULT] vcpu_pin_set")
            if conf.vcpu_pin_set is not None
            else _cpuset(compute.cpu_shared_set, "[compute] cpu_shared_set"),
            "cpu_dedicated_set": _cpuset(compute.cpu_dedicated_set,
                                         "[compute] cpu_dedicated_set"),
            "enabled_mdev_types": tuple(devices.enabled_mdev_types),
        }
        for name in ("cpu_allocation_ratio", "ram_allocation_ratio", "disk_allocation_ratio",
                     "initial_cpu_allocation_ratio", "initial_ram_allocation_ratio",
                     "initial_disk_allocation_ratio", "reserved_host_memory_mb",
                     "reserved_host_cpus", "reserved_host_disk_mb"):
            values[name] = getattr(conf, name)
    except cfg.ConfigFilesNotFoundError as error:
        raise NovaConfError(f"nova.conf: cannot read {', '.join(error.config_files)}") from None
    except cfg.ConfigFileParseError as error:
        raise NovaConfError(f"nova.conf: {error.config_file}: {error.msg}") from None
    except (cfg.ConfigFileValueError, cfg.Error) as error:
        raise NovaConfError(f"nova.conf: {error}") from None
    finally:
        conf.clear()
    return NovaConf(sources=tuple(files), **values)

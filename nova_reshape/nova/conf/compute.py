"""What a compute host's nova.conf says about its resources, as one frozen record.

:func:`load_nova_conf` reads the :func:`~nova_reshape.nova.conf.options.compute_opts`
of nova.conf files into a :class:`NovaConf`, the record the migration, the
host-file generator and the pre-flight read:

* ``[pci] report_in_placement`` (False) and ``[pci] device_spec``
  (multi-valued JSON; old name ``[pci] passthrough_whitelist``), parsed
  into :class:`~nova_reshape.nova.conf.device_spec.DeviceSpec` records;
* ``[compute] cpu_shared_set`` / ``cpu_dedicated_set`` (unset), and the
  legacy ``[DEFAULT] vcpu_pin_set`` which, like in nova, wins over
  ``cpu_shared_set``;
* ``[devices] enabled_mdev_types`` (empty; old name ``enabled_vgpu_types``);
* ``[DEFAULT] cpu/ram/disk_allocation_ratio`` (unset) and
  ``initial_cpu/ram/disk_allocation_ratio`` (4.0, 1.0, 1.0);
* ``[DEFAULT] reserved_host_memory_mb`` (512), ``reserved_host_cpus`` (0),
  ``reserved_host_disk_mb`` (0).

A file that is missing, unreadable, not INI, or holds a bad value raises
:class:`~nova_reshape.nova.errors.NovaConfError` with one line naming the
file or the option.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from oslo_config import cfg

from nova_reshape.nova.conf.device_spec import DeviceSpec, parse_device_spec
from nova_reshape.nova.conf.files import load_conf, refusing_bad_values
from nova_reshape.nova.cpuset import parse_cpuset
from nova_reshape.nova.errors import NovaConfError

_PLAIN = ("cpu_allocation_ratio", "ram_allocation_ratio", "disk_allocation_ratio",
          "initial_cpu_allocation_ratio", "initial_ram_allocation_ratio",
          "initial_disk_allocation_ratio", "reserved_host_memory_mb",
          "reserved_host_cpus", "reserved_host_disk_mb")


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


def _cpuset(value: str | None, key: str) -> frozenset[int] | None:
    if value is None:
        return None
    try:
        return parse_cpuset(value)
    except ValueError as error:
        raise NovaConfError(f"{key} {value!r}: {error}") from None


def compute_conf(conf: cfg.ConfigOpts, sources: Sequence[str] = ()) -> NovaConf:
    """The :class:`NovaConf` of a ``ConfigOpts`` whose files (``sources``) are parsed.

    NovaConfError (one line) for a bad value.
    """
    with refusing_bad_values():
        pci, compute = conf.pci, conf.compute
        values: dict[str, Any] = {
            "report_in_placement": pci.report_in_placement,
            "device_spec": tuple(spec for value in pci.device_spec
                                 for spec in parse_device_spec(value)),
            "cpu_shared_set": _cpuset(conf.vcpu_pin_set, "[DEFAULT] vcpu_pin_set")
            if conf.vcpu_pin_set is not None
            else _cpuset(compute.cpu_shared_set, "[compute] cpu_shared_set"),
            "cpu_dedicated_set": _cpuset(compute.cpu_dedicated_set,
                                         "[compute] cpu_dedicated_set"),
            "enabled_mdev_types": tuple(conf.devices.enabled_mdev_types),
        }
        values.update((name, getattr(conf, name)) for name in _PLAIN)
    return NovaConf(sources=tuple(sources), **values)


def load_nova_conf(files: Sequence[str]) -> NovaConf:
    """Parse nova.conf ``files`` (later ones win) into a :class:`NovaConf`.

    Raises NovaConfError (one line) for a missing or malformed file or a
    bad value.
    """
    conf = load_conf(files)
    try:
        return compute_conf(conf, files)
    finally:
        conf.clear()

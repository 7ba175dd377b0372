"""nova.conf and the host descriptions: fill in, compare, and say what is needed.

With ``--nova-config`` the target release's nova.conf is an input of the
plan. :func:`merge_node` fills what a node's host description leaves out
(its CPU sets; a PCI device's resource class, traits and physical network
from the matching ``[pci] device_spec`` entry) and returns a
:class:`~nova_reshape.compute.preflight.Finding` (class ``nova_conf``) for
every place where the two disagree, each naming the key to change, so
nova-compute does not start to find a tree it would reshape again or refuse.

:func:`needed_config` is the other direction: the nova.conf options the
target release's compute needs to keep the tree the migration leaves
(``--print-nova-config``, and the "nova.conf the new release needs"
section of docs/migrate-compute-inventory.md).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from nova_reshape.compute.preflight import Finding
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.nova.cpuset import format_cpuset
from nova_reshape.virt.host import Node, PciDevice
from nova_reshape.virt.names import normalize_resource_class
from nova_reshape.virt.pci import device_resource_class, device_traits
from nova_reshape.virt.releases import Release, Reshape, performed

CODE = "nova_conf"


def _pci_in_placement(node: Node, target: Release) -> bool:
    return (Reshape.PCI in performed(target)
            and any(not device.neutron.belong_to_neutron for device in node.pci_devices))


def merge_node(node: Node, conf: NovaConf, target: Release) -> tuple[Node, list[Finding]]:
    """``node`` completed from ``conf``, and the disagreements between the two."""
    findings: list[Finding] = []

    def disagree(message: str) -> None:
        findings.append(Finding(CODE, node.nodename, message))

    cpus: dict[str, Any] = {}
    for key in ("cpu_shared_set", "cpu_dedicated_set"):
        described, configured = getattr(node, key), getattr(conf, key)
        if described is None:
            cpus[key] = configured
        elif configured is not None and configured != described:
            disagree(f"[compute] {key} is {format_cpuset(configured)} in nova.conf but "
                     f"{format_cpuset(described)} in the host file: change [compute] {key} "
                     "or the host file")
    devices = []
    for device in node.pci_devices:
        merged, problem = _merge_device(device, conf)
        devices.append(merged)
        if problem:
            disagree(problem)
    if _pci_in_placement(dataclasses.replace(node, pci_devices=tuple(devices)), target) \
            and not conf.report_in_placement:
        disagree(f"PCI devices are described but [pci] report_in_placement is false: "
                 f"nova-compute {target.number} would refuse to start; set [pci] "
                 "report_in_placement = True")
    if conf.enabled_mdev_types:
        for gpu in node.gpus:
            unknown = sorted(set(gpu.mdev_types) - set(conf.enabled_mdev_types))
            if unknown:
                disagree(f"GPU {gpu.address} has mdev types {', '.join(unknown)} that "
                         "[devices] enabled_mdev_types does not enable: add them to "
                         "[devices] enabled_mdev_types")
    return dataclasses.replace(node, pci_devices=tuple(devices), **cpus), findings


def _merge_device(device: PciDevice, conf: NovaConf) -> tuple[PciDevice, str | None]:
    spec = conf.spec_for(device.address, device.vendor_id, device.product_id)
    if spec is None:
        return device, (f"PCI device {device.address} ({device.vendor_id}:{device.product_id})"
                        " matches no [pci] device_spec entry: add one to [pci] device_spec")
    fields: dict[str, Any] = {}
    for name, configured in (("resource_class", spec.resource_class),
                             ("physical_network", spec.physical_network)):
        described = getattr(device, name)
        if described is None:
            fields[name] = configured
        elif configured is None or _canonical(name, configured) != _canonical(name, described):
            return device, (f"PCI device {device.address}: the [pci] device_spec entry "
                            f"matching it has {name} {configured!r} but the host file says "
                            f"{described!r}: change the [pci] device_spec entry's {name}")
    if device.remote_managed and not spec.neutron.remote_managed:
        return device, (f"PCI device {device.address}: the host file says remote_managed but "
                        "the [pci] device_spec entry matching it does not: add "
                        "\"remote_managed\": \"true\" to the entry")
    if spec.neutron.remote_managed:
        fields["remote_managed"] = True
    if not device.traits:
        fields["traits"] = spec.traits
    elif device_traits(device) != device_traits(dataclasses.replace(device, traits=spec.traits)):
        return device, (f"PCI device {device.address}: the [pci] device_spec entry matching "
                        f"it has traits {','.join(spec.traits)!r} but the host file says "
                        f"{','.join(device.traits)!r}: change the [pci] device_spec entry's "
                        "traits")
    return dataclasses.replace(device, **fields), None


def _canonical(name: str, value: str) -> str:
    return normalize_resource_class(value) if name == "resource_class" else value


def needed_config(node: Node, target: Release) -> dict[str, dict[str, list[str]]]:
    """group -> option -> values (several for a multi-valued option) for ``node``."""
    needed: dict[str, dict[str, list[str]]] = {}
    compute = needed.setdefault("compute", {})
    for key in ("cpu_shared_set", "cpu_dedicated_set"):
        value = getattr(node, key)
        if value is not None:
            compute[key] = [format_cpuset(value)]
    if _pci_in_placement(node, target):
        pci = needed.setdefault("pci", {})
        pci["report_in_placement"] = ["True"]
        pci["device_spec"] = [json.dumps(_spec_entry(device), sort_keys=True)
                              for device in node.pci_devices]
    types = sorted({mdev_type for gpu in node.gpus for mdev_type in gpu.mdev_types})
    if types:
        needed.setdefault("devices", {})["enabled_mdev_types"] = [",".join(types)]
    return {group: options for group, options in needed.items() if options}


def _spec_entry(device: PciDevice) -> dict[str, str]:
    entry = {"address": device.address, "vendor_id": device.vendor_id,
             "product_id": device.product_id}
    if device.remote_managed:
        entry["remote_managed"] = "true"
    if device.neutron.belong_to_neutron:
        entry["physical_network"] = str(device.physical_network)
        return entry
    entry["resource_class"] = device_resource_class(device)
    if device.traits:
        entry["traits"] = ",".join(device_traits(device))
    return entry


def render_config(nodes: list[Node], target: Release) -> str:
    """``--print-nova-config``: one INI fragment per node, ready for its nova.conf."""
    blocks = []
    for node in nodes:
        if node.is_ironic:
            continue
        lines = [f"# {node.nodename}: nova.conf for nova-compute {target.number} "
                 f"({target.series})"]
        needed = needed_config(node, target)
        for group, options in needed.items():
            lines.append(f"[{group}]")
            lines.extend(f"{key} = {value}" for key, values in options.items()
                         for value in values)
        if not needed:
            lines.append("# nothing this migration depends on")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"

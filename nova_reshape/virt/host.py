"""Load and validate host description files (docs/host-description.md).

:func:`load_host` reads one YAML file, validates it against
:data:`~nova_reshape.virt.host_schema.HOST_SCHEMA` and the consistency
rules below, and returns a :class:`Host` of frozen dataclasses.
:func:`load_hosts` takes files and directories (every ``*.yaml``/``*.yml``
inside, sorted) and also rejects a nodename or node uuid described twice.

Any problem raises :class:`HostDescriptionError` whose message names the
file, the place inside it (``nodes[0].gpus[1].capacity``) and the problem,
so an operator can fix the file from that one line.

Rules beyond the schema, per node: GPU addresses, PCI addresses, NUMA cell
ids, accelerator names and consumer uuids are unique; a cell's ``cpus``
(shared, VCPU) and ``pcpus`` (dedicated, PCPU) do not overlap; its huge
pages fit in its memory; a ``type-VF`` names its ``parent`` PF and only a
VF does. References from consumers to devices are *not* checked here: a
consumer using a device that is gone is a pre-flight finding
(:mod:`nova_reshape.compute.preflight`), not a malformed file.

YAML is read with the safe loader minus YAML 1.1's base-60 numbers, so an
unquoted PCI address such as ``0000:00:02.0`` stays a string
(:mod:`nova_reshape.virt.yaml_loader`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import jsonschema
import yaml

from nova_reshape.nova.cpuset import parse_cpuset
from nova_reshape.nova.pci import NeutronTags, canonical_address
from nova_reshape.provider_tree import ATOMIC_TYPES
from nova_reshape.virt import host_schema
from nova_reshape.virt.host_schema import HOST_SCHEMA
from nova_reshape.virt.names import normalize_resource_class
from nova_reshape.virt.validated import ValidatedDocuments
from nova_reshape.virt.yaml_loader import Loader

YAML_SUFFIXES = (".yaml", ".yml")
IRONIC = "ironic"

#: Names the faults of a document host_schema.certainly_valid did not accept.
_VALIDATOR = jsonschema.Draft202012Validator(HOST_SCHEMA)


class HostDescriptionError(ValueError):
    """A host description file is unreadable or invalid."""

    def __init__(self, path: str, location: str, problem: str) -> None:
        self.path = path
        self.location = location
        self.problem = problem
        where = f"{path}: {location}" if location else path
        super().__init__(f"{where}: {problem}")


# -- the model -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Gpu:
    address: str
    device_name: str
    capacity: int
    mdev_class: str = "VGPU"
    mdev_types: tuple[str, ...] = ()
    traits: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class NumaCell:
    id: int
    memory_mb: int
    cpus: frozenset[int] = frozenset()
    pcpus: frozenset[int] = frozenset()
    reserved_memory_mb: int = 0
    huge_pages: Mapping[int, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class PciDevice:
    address: str
    vendor_id: str
    product_id: str
    type: str = "type-PCI"
    parent: str | None = None
    resource_class: str | None = None
    traits: tuple[str, ...] = ()
    physical_network: str | None = None
    remote_managed: bool = False

    @property
    def neutron(self) -> NeutronTags:
        """Whether (and why) the device is Neutron's, not nova's to report."""
        return NeutronTags(self.physical_network, self.remote_managed)


@dataclasses.dataclass(frozen=True)
class Accelerator:
    name: str
    type: str
    resource_class: str
    capacity: int
    address: str | None = None
    vendor_id: str | None = None
    product_id: str | None = None
    traits: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class NumaShare:
    """What one consumer takes from one host cell; None = split evenly."""

    cell: int
    vcpus: int | None = None
    pcpus: int | None = None
    memory_mb: int | None = None


@dataclasses.dataclass(frozen=True)
class Consumer:
    uuid: str
    kind: str = "instance"
    instance: str | None = None
    #: (mdev uuid or None, parent GPU address), one per mediated device.
    mdevs: tuple[tuple[str | None, str], ...] = ()
    #: Cells the consumer is placed on; None when it has no NUMA placement.
    numa: tuple[NumaShare, ...] | None = None
    pci: tuple[str, ...] = ()
    #: accelerator name or address -> units held.
    accelerators: Mapping[str, int] = dataclasses.field(default_factory=dict)
    #: The flavor's hw:cpu_policy: ``dedicated`` (pinned) or ``shared``.
    cpu_policy: str = "shared"

    @property
    def is_pinned(self) -> bool:
        return self.cpu_policy == "dedicated"

    @property
    def is_migration(self) -> bool:
        return self.kind == "migration"


@dataclasses.dataclass(frozen=True)
class Node:
    nodename: str
    uuid: str | None = None
    hypervisor_type: str | None = None
    gpus: tuple[Gpu, ...] = ()
    numa_cells: tuple[NumaCell, ...] = ()
    pci_devices: tuple[PciDevice, ...] = ()
    accelerators: tuple[Accelerator, ...] = ()
    consumers: tuple[Consumer, ...] = ()
    #: The compute service's disabled flag; None: unknown, the trait is left alone.
    disabled: bool | None = None
    #: [compute] cpu_shared_set / cpu_dedicated_set; None when not given.
    cpu_shared_set: frozenset[int] | None = None
    cpu_dedicated_set: frozenset[int] | None = None
    #: File and index this node came from, for messages.
    source: str = ""

    @property
    def is_ironic(self) -> bool:
        return (self.hypervisor_type or "").lower() == IRONIC

    def consumer(self, uuid: str) -> Consumer | None:
        for consumer in self.consumers:
            if consumer.uuid == uuid:
                return consumer
        return None


@dataclasses.dataclass(frozen=True)
class Host:
    path: str
    host: str | None
    nodes: tuple[Node, ...]


# -- helpers -------------------------------------------------------------------


def nodedev_name(address: str) -> str:
    """libvirt's nodedev name for a PCI address: ``pci_0000_84_00_0``."""
    return "pci_" + re.sub(r"[:.]", "_", canonical_address(address))


def canonical_uuid(value: str) -> str:
    hexdigits = value.replace("-", "").lower()
    return "-".join((hexdigits[:8], hexdigits[8:12], hexdigits[12:16], hexdigits[16:20],
                     hexdigits[20:]))


def accelerator_resource_class(device_type: str) -> str:
    """Cyborg's class for a device type: FPGA, PGPU for GPUs, else CUSTOM_<TYPE>."""
    if device_type.upper() == "GPU":
        return "PGPU"
    return normalize_resource_class(device_type)


def _stringify_keys(value: Any) -> Any:
    """YAML may give int keys (``2048: 16``); JSON Schema wants strings."""
    if isinstance(value, dict):
        return {str(key): item if type(item) in ATOMIC_TYPES else _stringify_keys(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in ATOMIC_TYPES else _stringify_keys(item) for item in value]
    return value


#: Friendly names of the schema's patterns, for messages.
_PATTERN_NAMES = {
    host_schema.PCI_ADDRESS: "a PCI address like 0000:84:00.0",
    host_schema.UUID: "a UUID",
    host_schema.CPUSET_STRING: "a CPU set like 0-7,16",
    host_schema.TAG_NAME: "a name of letters, digits and _",
}


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "pattern" and error.validator_value in _PATTERN_NAMES:
        return f"{error.instance!r} is not {_PATTERN_NAMES[error.validator_value]}"
    return error.message


def format_path(parts: Iterable[Any]) -> str:
    """``["nodes", 0, "gpus"]`` -> ``nodes[0].gpus``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(document)"


# -- loading -------------------------------------------------------------------


def _validate(document: Any, path: str) -> None:
    if host_schema.certainly_valid(document):
        return
    errors = list(_VALIDATOR.iter_errors(document))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        raise HostDescriptionError(path, format_path(error.absolute_path), _message(error))


def parse_host(document: Any, path: str = "<host description>", *,
               built: bool = False, validated: ValidatedDocuments | None = None) -> Host:
    """Validate a parsed document and build the model; HostDescriptionError if bad.

    ``built``: the document was built in memory by this project's describing code
    from nova's typed records (:mod:`nova_reshape.hostfacts.describe`), not read
    from a file: the schema pass, most of the cost of describing 10,000 hosts, is
    skipped; the model's own checks still run, and a document the model cannot be
    built from is then validated, so its fault is named as for a file. ``validated``:
    the documents that passed the schema in earlier passes of the run, not validated again."""
    if document is None:
        raise HostDescriptionError(path, "", "the file is empty")
    document = _stringify_keys(document)
    if validated is not None and not built:
        validated.once(document, lambda checked: _validate(checked, path))
    elif not built:
        _validate(document, path)
    try:
        nodes = tuple(_node(raw, path, index, document.get("host"))
                      for index, raw in enumerate(document["nodes"]))
    except (KeyError, TypeError, AttributeError):
        if built:
            _validate(document, path)
        raise
    _unique(path, "nodes", [node.nodename for node in nodes], "nodename")
    _unique(path, "nodes", [node.uuid for node in nodes if node.uuid], "uuid")
    return Host(path=path, host=document.get("host"), nodes=nodes)


def load_host(path: str, validated: ValidatedDocuments | None = None) -> Host:
    """Read and validate one host description file (see :func:`parse_host`)."""
    return parse_host(read_yaml(path), path, validated=validated)


def read_yaml(path: str) -> Any:
    """Parse a YAML file with this module's loader; HostDescriptionError if unreadable."""
    try:
        with open(path, encoding="utf-8") as stream:
            document = yaml.load(stream, Loader=Loader)  # noqa: S506 (safe loader subclass)
    except OSError as error:
        raise HostDescriptionError(path, "", error.strerror or str(error)) from error
    except UnicodeDecodeError as error:
        raise HostDescriptionError(path, "", f"not UTF-8 text ({error.reason})") from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise HostDescriptionError(path, where, f"invalid YAML: {problem}") from error
    return document


def expand_paths(paths: Sequence[str]) -> list[str]:
    """Files as given; directories replaced by their YAML files, sorted."""
    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(name for name in os.listdir(path) if name.endswith(YAML_SUFFIXES))
            if not names:
                raise HostDescriptionError(path, "", "directory holds no *.yaml or *.yml file")
            files.extend(os.path.join(path, name) for name in names)
        else:
            files.append(path)
    return files


def load_hosts(paths: Sequence[str]) -> list[Host]:
    """Load every file (directories expanded); nodes must be unique across files."""
    return list(iter_hosts(paths))


def iter_hosts(paths: Sequence[str], validated: ValidatedDocuments | None = None,
               ) -> Iterator[Host]:
    """Every file's host (directories expanded), read as the caller asks for it:
    no more than one is held here, only the names and uuids of the nodes seen
    (nodes must be unique across files). HostDescriptionError for a bad file
    when the stream reaches it; :func:`check_readable` finds a missing one first."""
    seen: dict[str, str] = {}
    for path in expand_paths(paths):
        host = load_host(path, validated)
        for index, node in enumerate(host.nodes):
            for key in (f"nodename {node.nodename}", f"uuid {node.uuid}" if node.uuid else ""):
                if not key:
                    continue
                if key in seen and seen[key] != host.path:
                    raise HostDescriptionError(
                        host.path, f"nodes[{index}]", f"{key} is also described in {seen[key]}")
                seen[key] = host.path
        yield host


def check_readable(paths: Sequence[str]) -> list[str]:
    """The files of ``paths`` (directories expanded), each openable for reading;
    HostDescriptionError, as :func:`load_host` words it, for the first that is not."""
    files = expand_paths(paths)
    for path in files:
        try:
            with open(path, "rb"):
                pass
        except OSError as error:
            raise HostDescriptionError(path, "", error.strerror or str(error)) from error
    return files


def _unique(path: str, where: str, values: list[Any], what: str) -> None:
    seen: set[Any] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise HostDescriptionError(path, f"{where}[{index}]", f"duplicate {what} {value!r}")
        seen.add(value)


def _node(raw: Mapping[str, Any], path: str, index: int, host: str | None = None) -> Node:
    where = f"nodes[{index}]"
    nodename = raw["nodename"]
    gpus = tuple(_gpu(item) for item in raw.get("gpus", []))
    _unique(path, f"{where}.gpus", [gpu.address for gpu in gpus], "address")
    cells = tuple(_cell(item, path, f"{where}.numa_cells[{i}]")
                  for i, item in enumerate(raw.get("numa_cells", [])))
    _unique(path, f"{where}.numa_cells", [cell.id for cell in cells], "cell id")
    devices = tuple(_pci(item, path, f"{where}.pci_devices[{i}]")
                    for i, item in enumerate(raw.get("pci_devices", [])))
    _unique(path, f"{where}.pci_devices", [device.address for device in devices], "address")
    accelerators = tuple(_accelerator(item, host or nodename, nodename, i)
                         for i, item in enumerate(raw.get("accelerators", [])))
    _unique(path, f"{where}.accelerators", [acc.name for acc in accelerators], "name")
    consumers = tuple(_consumer(item, path, f"{where}.consumers[{i}]")
                      for i, item in enumerate(raw.get("consumers", [])))
    _unique(path, f"{where}.consumers", [consumer.uuid for consumer in consumers], "uuid")
    return Node(nodename=nodename, uuid=canonical_uuid(raw["uuid"]) if raw.get("uuid") else None,
                hypervisor_type=raw.get("hypervisor_type"), gpus=gpus, numa_cells=cells,
                pci_devices=devices, accelerators=accelerators, consumers=consumers,
                disabled=raw.get("disabled"),
                cpu_shared_set=_cpuset(raw, "cpu_shared_set", path, where),
                cpu_dedicated_set=_cpuset(raw, "cpu_dedicated_set", path, where),
                source=f"{path} {where}")


def _cpuset(raw: Mapping[str, Any], key: str, path: str, where: str) -> frozenset[int] | None:
    if raw.get(key) is None:
        return None
    try:
        return parse_cpuset(raw[key])
    except ValueError as error:
        raise HostDescriptionError(path, f"{where}.{key}", f"bad CPU set: {error}") from error


def _gpu(raw: Mapping[str, Any]) -> Gpu:
    address = canonical_address(raw["address"])
    return Gpu(address=address, device_name=raw.get("device_name") or nodedev_name(address),
               capacity=raw["capacity"], mdev_class=raw.get("mdev_class", "VGPU"),
               mdev_types=tuple(raw.get("mdev_types", ())), traits=tuple(raw.get("traits", ())))


def _cell(raw: Mapping[str, Any], path: str, where: str) -> NumaCell:
    try:
        cpus = parse_cpuset(raw.get("cpus"))
        pcpus = parse_cpuset(raw.get("pcpus"))
    except ValueError as error:
        raise HostDescriptionError(path, where, f"bad CPU set: {error}") from error
    overlap = cpus & pcpus
    if overlap:
        raise HostDescriptionError(path, f"{where}.pcpus",
                                   f"CPUs {sorted(overlap)} are in both cpus and pcpus")
    huge_pages = {int(size): count for size, count in raw.get("huge_pages", {}).items()}
    huge_mb = sum(size * count for size, count in huge_pages.items()) // 1024
    if huge_mb > raw["memory_mb"]:
        raise HostDescriptionError(path, f"{where}.huge_pages",
                                   f"{huge_mb} MiB of huge pages exceed memory_mb "
                                   f"{raw['memory_mb']}")
    reserved = raw.get("reserved_memory_mb", 0)
    if reserved > raw["memory_mb"]:
        raise HostDescriptionError(path, f"{where}.reserved_memory_mb",
                                   f"{reserved} exceeds memory_mb {raw['memory_mb']}")
    return NumaCell(id=raw["id"], memory_mb=raw["memory_mb"], cpus=cpus, pcpus=pcpus,
                    reserved_memory_mb=reserved, huge_pages=huge_pages)


def _pci(raw: Mapping[str, Any], path: str, where: str) -> PciDevice:
    kind = raw.get("type", "type-PCI")
    address = canonical_address(raw["address"])
    parent = canonical_address(raw["parent"]) if raw.get("parent") else None
    if kind == "type-VF" and parent is None:
        raise HostDescriptionError(path, where, "a type-VF needs 'parent' (its PF's address)")
    if kind != "type-VF" and parent is not None:
        raise HostDescriptionError(path, f"{where}.parent", f"only a type-VF has a parent, "
                                   f"this is {kind}")
    if parent == address:
        raise HostDescriptionError(path, f"{where}.parent", "a VF cannot be its own parent")
    return PciDevice(address=address, vendor_id=raw["vendor_id"].lower(),
                     product_id=raw["product_id"].lower(), type=kind, parent=parent,
                     resource_class=raw.get("resource_class"),
                     traits=tuple(raw.get("traits", ())),
                     physical_network=raw.get("physical_network"),
                     remote_managed=bool(raw.get("remote_managed", False)))


def cyborg_name(host: str, address: str) -> str:
    """Cyborg's deployable (and provider) name: ``<compute host>_<PCI address>``.

    Cyborg's drivers name a device after the agent's ``[DEFAULT] host``
    (the compute host, as nova-compute's) and the address as lspci prints
    it (lower case).
    """
    return f"{host}_{canonical_address(address)}"


def _accelerator(raw: Mapping[str, Any], host: str, nodename: str, index: int) -> Accelerator:
    address = canonical_address(raw["address"]) if raw.get("address") else None
    default_name = (cyborg_name(host, address) if address
                    else f"{nodename}_{raw['type']}_{index}")
    return Accelerator(
        name=raw.get("name") or default_name, type=raw["type"],
        resource_class=(normalize_resource_class(raw["resource_class"])
                        if raw.get("resource_class") else accelerator_resource_class(raw["type"])),
        capacity=raw["capacity"], address=address,
        vendor_id=raw.get("vendor_id"), product_id=raw.get("product_id"),
        traits=tuple(raw.get("traits", ())))


def _consumer(raw: Mapping[str, Any], path: str, where: str) -> Consumer:
    numa: tuple[NumaShare, ...] | None = None
    if "numa" in raw:
        shares = [NumaShare(cell=item) if isinstance(item, int) else NumaShare(**item)
                  for item in raw["numa"]]
        _unique(path, f"{where}.numa", [share.cell for share in shares], "cell")
        numa = tuple(shares)
    accelerators: dict[str, int] = {}
    for item in raw.get("accelerators", []):
        device = item["device"]
        key = canonical_address(device) if re.match(r"^[0-9a-fA-F]{4}:", device) else device
        accelerators[key] = accelerators.get(key, 0) + item.get("count", 1)
    return Consumer(
        uuid=canonical_uuid(raw["uuid"]), kind=raw.get("kind", "instance"),
        instance=canonical_uuid(raw["instance"]) if raw.get("instance") else None,
        mdevs=tuple((canonical_uuid(m["uuid"]) if m.get("uuid") else None,
                     canonical_address(m["gpu"])) for m in raw.get("mdevs", [])),
        numa=numa, pci=tuple(canonical_address(a) for a in raw.get("pci", [])),
        accelerators=accelerators, cpu_policy=raw.get("cpu_policy", "shared"))

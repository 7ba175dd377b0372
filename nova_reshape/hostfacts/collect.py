"""What only the hypervisor knows: mediated devices and which guest holds each.

Run on a compute host (``nova-reshape-manage host collect``), no nova
service needed:

* sysfs: every mediated device is ``<sysfs>/bus/mdev/devices/<uuid>``, a
  link into its parent PCI device's directory (the parent's address is the
  directory above the mdev) with ``mdev_type`` linking to the type it was
  created as; every device able to host mdevs is
  ``<sysfs>/class/mdev_bus/<address>`` with
  ``mdev_supported_types/<type>/available_instances``;
* libvirt: a domain's ``<uuid>`` is the instance uuid, and each
  ``<hostdev mode='subsystem' type='mdev'>`` names the mdev in
  ``<source><address uuid='...'/></source>``. Definitions come from
  ``virsh dumpxml`` when libvirt answers, else from the XML files in
  ``/etc/libvirt/qemu/`` (stopped guests are defined there too).

A definition that cannot be read or parsed is reported as one error line
(file and problem) and the rest is still collected.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess  # noqa: S404 (virsh is run without a shell, with fixed arguments)
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable
from dataclasses import dataclass

from nova_reshape.hostfacts.collected import CollectedGpu, CollectedHost, CollectedMdev
from nova_reshape.nova.pci import canonical_address
from nova_reshape.virt.host import canonical_uuid
from nova_reshape.virt.host_schema import PCI_ADDRESS, UUID

DEFAULT_SYSFS = "/sys"
DEFAULT_LIBVIRT_XML_DIR = "/etc/libvirt/qemu"
VIRSH_URI = "qemu:///system"
VIRSH_TIMEOUT = 60


@dataclass(frozen=True)
class DomainDefinition:
    """A libvirt domain definition: where it came from and its text."""

    source: str
    xml: str


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as stream:
            return stream.read().strip()
    except OSError:
        return None


def _matches(pattern: str, value: str) -> bool:
    return re.match(pattern, value) is not None


def read_sysfs(root: str) -> tuple[list[CollectedGpu], list[CollectedMdev], list[str]]:
    """GPUs able to host mdevs, existing mdevs (without holders), and problems found."""
    errors: list[str] = []
    gpus = []
    bus = os.path.join(root, "class", "mdev_bus")
    for name in sorted(os.listdir(bus)) if os.path.isdir(bus) else []:
        if not _matches(PCI_ADDRESS, name):
            continue
        types_dir = os.path.join(bus, name, "mdev_supported_types")
        types = {}
        for type_name in sorted(os.listdir(types_dir)) if os.path.isdir(types_dir) else []:
            available = _read(os.path.join(types_dir, type_name, "available_instances"))
            if available is None or not available.isdigit():
                errors.append(f"{os.path.join(types_dir, type_name)}: no readable "
                              "available_instances")
                continue
            types[type_name] = int(available)
        gpus.append(CollectedGpu(address=canonical_address(name), mdev_types=types))
    mdevs = []
    devices = os.path.join(root, "bus", "mdev", "devices")
    for name in sorted(os.listdir(devices)) if os.path.isdir(devices) else []:
        if not _matches(UUID, name):
            continue
        path = os.path.realpath(os.path.join(devices, name))
        parent = os.path.basename(os.path.dirname(path))
        if not _matches(PCI_ADDRESS, parent):
            errors.append(f"{os.path.join(devices, name)}: parent {parent!r} is not a PCI "
                          "address")
            continue
        type_link = os.path.join(path, "mdev_type")
        mdev_type = (os.path.basename(os.path.realpath(type_link))
                     if os.path.exists(type_link) else None)
        mdevs.append(CollectedMdev(uuid=canonical_uuid(name), gpu=canonical_address(parent),
                                   type=mdev_type))
    return gpus, mdevs, errors


def mdev_holders(definitions: Iterable[DomainDefinition]) -> tuple[dict[str, str], list[str]]:
    """mdev uuid -> domain (instance) uuid, and one error per unparsable definition."""
    holders: dict[str, str] = {}
    errors: list[str] = []
    for definition in definitions:
        try:
            domain = ElementTree.fromstring(definition.xml)
        except ElementTree.ParseError as error:
            errors.append(f"{definition.source}: not a domain definition: {error}")
            continue
        uuid = (domain.findtext("uuid") or "").strip()
        if domain.tag != "domain" or not _matches(UUID, uuid):
            errors.append(f"{definition.source}: not a domain definition with a uuid")
            continue
        for hostdev in domain.iterfind("devices/hostdev"):
            if hostdev.get("mode") != "subsystem" or hostdev.get("type") != "mdev":
                continue
            address = hostdev.find("source/address")
            mdev = address.get("uuid") if address is not None else None
            if mdev and _matches(UUID, mdev):
                holders[canonical_uuid(mdev)] = canonical_uuid(uuid)
            else:
                errors.append(f"{definition.source}: an mdev hostdev without a source "
                              "address uuid")
    return holders, errors


def definitions_from_dir(directory: str) -> tuple[list[DomainDefinition], list[str]]:
    """The ``*.xml`` files of a directory (libvirt's persistent definitions)."""
    definitions: list[DomainDefinition] = []
    errors: list[str] = []
    try:
        names = sorted(os.listdir(directory))
    except OSError as error:
        return [], [f"{directory}: cannot list domain definitions: {error.strerror or error}"]
    for name in names:
        path = os.path.join(directory, name)
        if not name.endswith(".xml") or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as stream:
                definitions.append(DomainDefinition(path, stream.read()))
        except (OSError, UnicodeDecodeError) as error:
            errors.append(f"{path}: cannot read: {getattr(error, 'strerror', None) or error}")
    return definitions, errors


def definitions_from_virsh(virsh: str = "virsh") -> list[DomainDefinition] | None:
    """Every domain's XML from ``virsh dumpxml``; None when libvirt does not answer."""
    if shutil.which(virsh) is None:
        return None

    def run(*args: str) -> str | None:
        try:
            result = subprocess.run([virsh, "-c", VIRSH_URI, *args], capture_output=True,  # noqa: S603
                                    text=True, timeout=VIRSH_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return result.stdout if result.returncode == 0 else None

    listing = run("list", "--all", "--uuid")
    if listing is None:
        return None
    definitions = []
    for uuid in sorted(line.strip() for line in listing.splitlines() if line.strip()):
        xml = run("dumpxml", uuid)
        if xml is not None:
            definitions.append(DomainDefinition(f"virsh dumpxml {uuid}", xml))
    return definitions


def collect(host: str, sysfs_root: str = DEFAULT_SYSFS, libvirt_xml_dir: str | None = None,
            use_virsh: bool = True) -> CollectedHost:
    """Everything ``host collect`` writes for ``host``.

    With ``libvirt_xml_dir`` the definitions are read from that directory
    only; otherwise from virsh when ``use_virsh`` and libvirt answers, else
    from :data:`DEFAULT_LIBVIRT_XML_DIR`.
    """
    gpus, mdevs, errors = read_sysfs(sysfs_root)
    definitions = None
    if libvirt_xml_dir is None and use_virsh:
        definitions = definitions_from_virsh()
    if definitions is None:
        definitions, read_errors = definitions_from_dir(libvirt_xml_dir or DEFAULT_LIBVIRT_XML_DIR)
        errors.extend(read_errors)
    holders, parse_errors = mdev_holders(definitions)
    errors.extend(parse_errors)
    existing = {mdev.uuid for mdev in mdevs}
    for mdev_uuid, domain in sorted(holders.items()):
        if mdev_uuid not in existing:
            errors.append(f"domain {domain} uses mdev {mdev_uuid}, which does not exist in "
                          "sysfs: its GPU is unknown")
    return CollectedHost(
        host=host, gpus=tuple(gpus),
        mdevs=tuple(CollectedMdev(uuid=mdev.uuid, gpu=mdev.gpu, type=mdev.type,
                                  instance=holders.get(mdev.uuid)) for mdev in mdevs),
        errors=tuple(errors))

"""Device and flavor objects from nova's cell database: PCI device pools
(``compute_nodes.pci_stats``), PCI requests and flavors (``instance_extra``)
and ``PciDevice`` envelopes."""

from __future__ import annotations

import json
from typing import Any

from nova_reshape.nova.errors import ObjectFormatError
from nova_reshape.nova.flavor import Flavor, FlavorInfo
from nova_reshape.nova.pci import NeutronTags, PciDevice, PciDevicePool, PciRequest
from nova_reshape.novadb.envelope import VersionedObject, expect, load_json, required, unwrap

# -- PCI device pools (compute_nodes.pci_stats) -------------------------------------


def pool_neutron_tags(device: PciDevice, pools: tuple[PciDevicePool, ...]) -> NeutronTags | None:
    """The Neutron tags nova's database gives ``device`` through its pool; None when no
    pool can hold it (a pool whose devices are all in use is not recorded) or the pools
    that can disagree (pools of an old release, not split per PF)."""
    verdicts = {pool.neutron for pool in pools if pool.may_hold(device)}
    return verdicts.pop() if len(verdicts) == 1 else None


def parse_pci_pools(text: str | None) -> tuple[PciDevicePool, ...]:
    """``compute_nodes.pci_stats`` (a ``PciDevicePoolList``) -> its pools."""
    document = load_json(text, "PciDevicePoolList")
    if document is None:
        return ()
    pools = expect(unwrap(document), "PciDevicePoolList").data.get("objects") or []
    if not isinstance(pools, list):
        raise ObjectFormatError("PciDevicePoolList objects is not a list")
    parsed = []
    for item in pools:
        data = expect(item, "PciDevicePool").data
        tags = data.get("tags") or {}
        if not isinstance(tags, dict):
            raise ObjectFormatError("PciDevicePool tags is not a mapping")
        parsed.append(PciDevicePool(
            vendor_id=str(required(data, "vendor_id", "PciDevicePool")),
            product_id=str(required(data, "product_id", "PciDevicePool")),
            count=int(required(data, "count", "PciDevicePool")),
            numa_node=data.get("numa_node"), tags={str(k): v for k, v in tags.items()}))
    return tuple(parsed)


# -- PCI requests (instance_extra.pci_requests) ----------------------------------


def parse_pci_requests(text: str | None) -> tuple[PciRequest, ...]:
    """``instance_extra.pci_requests`` -> its requests (empty when unset)."""
    document = load_json(text, "InstancePCIRequests")
    if document is None:
        return ()
    document = unwrap(document)
    if isinstance(document, VersionedObject):
        document = expect(document, "InstancePCIRequests").data.get("requests") or []
    if not isinstance(document, list):
        raise ObjectFormatError("InstancePCIRequests is not a list of requests")
    return tuple(_pci_request(item) for item in document)


def _pci_request(item: Any) -> PciRequest:
    if isinstance(item, VersionedObject):
        item = expect(item, "InstancePCIRequest").data
    if not isinstance(item, dict):
        raise ObjectFormatError("an InstancePCIRequest is not a mapping")
    spec = item.get("spec") or []
    if not isinstance(spec, list) or not all(isinstance(entry, dict) for entry in spec):
        raise ObjectFormatError("InstancePCIRequest spec is not a list of mappings")
    return PciRequest(count=int(required(item, "count", "InstancePCIRequest")),
                      spec=tuple(spec), alias_name=item.get("alias_name"),
                      request_id=item.get("request_id"), requester_id=item.get("requester_id"),
                      numa_policy=item.get("numa_policy"))


# -- flavors (instance_extra.flavor) ---------------------------------------------


def parse_flavor(value: Any) -> Flavor:
    """One ``Flavor`` envelope (already decoded JSON or unwrapped)."""
    data = expect(unwrap(value), "Flavor").data
    specs = data.get("extra_specs") or {}
    if not isinstance(specs, dict):
        raise ObjectFormatError("Flavor extra_specs is not a mapping")
    return Flavor(flavorid=str(data.get("flavorid", "")), name=data.get("name"),
                  vcpus=int(required(data, "vcpus", "Flavor")),
                  memory_mb=int(required(data, "memory_mb", "Flavor")),
                  root_gb=int(data.get("root_gb") or 0),
                  ephemeral_gb=int(data.get("ephemeral_gb") or 0),
                  swap=int(data.get("swap") or 0),
                  extra_specs={str(key): str(item) for key, item in specs.items()})


def parse_flavor_info(text: str | None) -> FlavorInfo | None:
    """``instance_extra.flavor`` -> FlavorInfo (None when unset)."""
    document = load_json(text, "flavor")
    if document is None:
        return None
    if not isinstance(document, dict) or "cur" not in document:
        raise ObjectFormatError("flavor has no 'cur' flavor")
    return FlavorInfo(cur=parse_flavor(document["cur"]),
                      old=parse_flavor(document["old"]) if document.get("old") else None,
                      new=parse_flavor(document["new"]) if document.get("new") else None)


# -- PCI devices -------------------------------------------------------------------


def parse_extra_info(text: str | None) -> dict[str, str]:
    """``pci_devices.extra_info`` JSON -> dict (empty when unset)."""
    document = load_json(text, "PciDevice extra_info")
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ObjectFormatError("PciDevice extra_info is not a mapping")
    return {str(key): value if isinstance(value, str) else json.dumps(value)
            for key, value in document.items()}


def parse_pci_device(value: Any) -> PciDevice:
    """One ``PciDevice`` envelope (e.g. from a migration context)."""
    data = expect(unwrap(value), "PciDevice").data
    extra = data.get("extra_info") or {}
    return PciDevice(
        compute_node_id=data.get("compute_node_id"),
        address=str(required(data, "address", "PciDevice")),
        vendor_id=str(required(data, "vendor_id", "PciDevice")),
        product_id=str(required(data, "product_id", "PciDevice")),
        dev_type=str(required(data, "dev_type", "PciDevice")),
        status=str(required(data, "status", "PciDevice")),
        instance_uuid=data.get("instance_uuid"), parent_addr=data.get("parent_addr"),
        numa_node=data.get("numa_node"), uuid=data.get("uuid"), label=data.get("label"),
        request_id=data.get("request_id"),
        extra_info=dict(extra) if isinstance(extra, dict) else {})

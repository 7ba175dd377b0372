"""``[pci] device_spec``: which PCI devices nova-compute may hand to guests, and how.

Each value is a JSON object or a JSON list of them; :func:`parse_device_spec`
turns one value into :class:`DeviceSpec` records and refuses, with a
one-line :class:`~nova_reshape.nova.errors.NovaConfError`, what nova would.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import re
from collections.abc import Mapping
from typing import Any

from nova_reshape.nova.errors import NovaConfError
from nova_reshape.nova.pci import NeutronTags, canonical_address, neutron_tags

#: Keys of a device_spec entry that match devices; every other key is a tag.
MATCH_KEYS = frozenset({"vendor_id", "product_id", "address", "devname"})


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

    @property
    def neutron(self) -> NeutronTags:
        """The entry's tags that hand its devices to Neutron (see nova_reshape.nova.pci)."""
        return neutron_tags(self.tags)

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

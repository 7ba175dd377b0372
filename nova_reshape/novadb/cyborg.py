"""Read Cyborg's database: which accelerators each host has and which instance holds them.

Cyborg (``cyborg/db/sqlalchemy/models.py``) keeps a ``devices`` row per
card (type, vendor, host), a ``deployables`` row per thing it reports to
Placement (its ``name`` is the child provider's name, ``rp_uuid`` that
provider's uuid, ``num_accelerators`` its capacity), ``attributes`` of a
deployable (``rc`` its resource class, ``trait*`` its traits),
``controlpath_ids`` and ``attach_handles`` with PCI addresses as JSON
(``{"domain": "0000", "bus": "5e", "device": "00", "function": "0"}``),
``extended_accelerator_requests`` (ARQs): one per accelerator an
instance was given, ``Bound`` to a deployable once attached, and
``device_profiles`` (``name``, ``uuid``, ``profile_json``: what a flavor's
``accel:device_profile`` names).

:func:`read_cyborg` reads the accelerators and ARQs read-only in one query
per table, like the nova reader, and returns a :class:`CyborgSnapshot`;
:func:`read_device_profiles` reads the profiles into a
:class:`~nova_reshape.accelerator.device_profile.ProfileCatalogue`.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from nova_reshape.accelerator.device_profile import ProfileCatalogue
from nova_reshape.novadb.readonly import read_only

WHAT = "cyborg database"
ARQ_BOUND = "Bound"

metadata = sa.MetaData()

devices = sa.Table(
    "devices", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("type", sa.String(30)),
    sa.Column("vendor", sa.String(255)),
    sa.Column("model", sa.String(255)),
    sa.Column("std_board_info", sa.Text),
    sa.Column("hostname", sa.String(255)),
)
deployables = sa.Table(
    "deployables", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("name", sa.String(255)),
    sa.Column("num_accelerators", sa.Integer),
    sa.Column("device_id", sa.Integer),
    sa.Column("rp_uuid", sa.String(36)),
)
attributes = sa.Table(
    "attributes", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("deployable_id", sa.Integer),
    sa.Column("key", sa.Text),
    sa.Column("value", sa.Text),
)
controlpath_ids = sa.Table(
    "controlpath_ids", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("device_id", sa.Integer),
    sa.Column("cpid_type", sa.String(30)),
    sa.Column("cpid_info", sa.String(255)),
)
attach_handles = sa.Table(
    "attach_handles", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("deployable_id", sa.Integer),
    sa.Column("attach_type", sa.String(30)),
    sa.Column("attach_info", sa.String(255)),
    sa.Column("in_use", sa.Boolean),
)
extended_accelerator_requests = sa.Table(
    "extended_accelerator_requests", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("state", sa.String(30)),
    sa.Column("hostname", sa.String(255)),
    sa.Column("device_rp_uuid", sa.String(36)),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("deployable_id", sa.Integer),
)

device_profiles = sa.Table(
    "device_profiles", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("name", sa.String(255)),
    sa.Column("profile_json", sa.Text),
)

_HEX4 = re.compile(r"^[0-9a-f]{4}$")


def pci_address(info: str | None) -> str | None:
    """Cyborg's PCI JSON (domain/bus/device/function) -> ``0000:5e:00.0``; None if not PCI."""
    try:
        parts = json.loads(info or "")
        return "{domain}:{bus}:{device}.{function}".format(**parts).lower()
    except (TypeError, ValueError, KeyError, AttributeError):
        return None


def hex4(value: Any) -> str | None:
    """``0x8086`` or ``8086`` -> ``8086``; None when not four hex digits."""
    text = str(value or "").lower().removeprefix("0x")
    return text if _HEX4.match(text) else None


@dataclass(frozen=True)
class AcceleratorRecord:
    """One deployable with its device: a Cyborg child provider of a compute node."""

    name: str
    uuid: str
    hostname: str
    device_type: str
    capacity: int
    rp_uuid: str | None = None
    resource_class: str | None = None
    traits: tuple[str, ...] = ()
    address: str | None = None
    vendor_id: str | None = None
    product_id: str | None = None

    def as_description(self) -> dict[str, Any]:
        """The host description ``accelerators`` entry (docs/host-description.md)."""
        entry: dict[str, Any] = {"name": self.name, "type": self.device_type}
        for key in ("address", "vendor_id", "product_id", "resource_class"):
            if getattr(self, key):
                entry[key] = getattr(self, key)
        entry["capacity"] = self.capacity
        if self.traits:
            entry["traits"] = list(self.traits)
        return entry


@dataclass(frozen=True)
class CyborgSnapshot:
    """Accelerators per Cyborg hostname and bound ARQs per instance."""

    accelerators: tuple[AcceleratorRecord, ...]
    #: instance uuid -> deployable name -> bound ARQs (units held).
    holdings: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def accelerators_of(self, *hostnames: str) -> list[AcceleratorRecord]:
        """Deployables of devices whose Cyborg hostname is one of ``hostnames``."""
        names = set(hostnames)
        return sorted((item for item in self.accelerators if item.hostname in names),
                      key=lambda item: item.name)

    def held_by(self, instance_uuid: str) -> Mapping[str, int]:
        return self.holdings.get(instance_uuid, {})


def _only(addresses: set[str] | None) -> str | None:
    """The address when there is exactly one (a deployable's handles, else its device's)."""
    return next(iter(addresses)) if addresses and len(addresses) == 1 else None


def read_cyborg(url: str) -> CyborgSnapshot:
    """Read every deployable and bound ARQ, read-only."""
    with read_only(url, WHAT) as connection:
        return read_cyborg_on(connection)


def read_cyborg_on(connection: sa.Connection) -> CyborgSnapshot:
    attrs: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for row in connection.execute(sa.select(attributes).order_by(attributes.c.key)).mappings():
        attrs[row["deployable_id"]].append((row["key"], row["value"]))
    handle_addresses: dict[int, set[str]] = defaultdict(set)
    for row in connection.execute(sa.select(attach_handles)).mappings():
        address = pci_address(row["attach_info"])
        if address:
            handle_addresses[row["deployable_id"]].add(address)
    device_addresses: dict[int, set[str]] = defaultdict(set)
    for row in connection.execute(sa.select(controlpath_ids)).mappings():
        address = pci_address(row["cpid_info"])
        if address:
            device_addresses[row["device_id"]].add(address)
    query = (sa.select(deployables, devices.c.type, devices.c.vendor, devices.c.hostname,
                       devices.c.std_board_info)
             .join(devices, devices.c.id == deployables.c.device_id)
             .order_by(deployables.c.id))
    records, names = [], {}
    for row in connection.execute(query).mappings():
        names[row["id"]] = row["name"]
        if not row["num_accelerators"]:
            continue
        pairs = attrs.get(row["id"], [])
        address = _only(handle_addresses.get(row["id"])) or \
            _only(device_addresses.get(row["device_id"]))
        try:
            board = json.loads(row["std_board_info"] or "{}")
        except ValueError:
            board = {}
        records.append(AcceleratorRecord(
            name=row["name"], uuid=row["uuid"], hostname=row["hostname"],
            device_type=row["type"], capacity=row["num_accelerators"], rp_uuid=row["rp_uuid"],
            resource_class=next((value for key, value in pairs if key == "rc"), None),
            traits=tuple(value for key, value in pairs if key.startswith("trait")),
            address=address,
            vendor_id=hex4(row["vendor"]),
            product_id=hex4(board.get("product_id") if isinstance(board, dict) else None)))
    arqs = extended_accelerator_requests
    held: dict[str, Counter[str]] = defaultdict(Counter)
    for row in connection.execute(
            sa.select(arqs.c.instance_uuid, arqs.c.deployable_id)
            # state is an ENUM type on PostgreSQL: compare it as text.
            .where(sa.cast(arqs.c.state, sa.String(30)) == ARQ_BOUND,
                   arqs.c.instance_uuid.is_not(None))).mappings():
        if row["deployable_id"] in names:
            held[row["instance_uuid"]][names[row["deployable_id"]]] += 1
    return CyborgSnapshot(accelerators=tuple(records),
                          holdings={uuid: dict(counts) for uuid, counts in held.items()})


def read_device_profiles(url: str) -> ProfileCatalogue:
    """Every device profile of Cyborg's database, read-only (one query)."""
    with read_only(url, WHAT) as connection:
        return device_profiles_on(connection)


def device_profiles_on(connection: sa.Connection) -> ProfileCatalogue:
    table = device_profiles
    query = sa.select(table.c.name, table.c.uuid, table.c.profile_json).order_by(table.c.id)
    return ProfileCatalogue((row.name, row.uuid, row.profile_json)
                            for row in connection.execute(query))

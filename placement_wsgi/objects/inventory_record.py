"""One inventory record, a provider's set of them, and the errors about them.

Pure data and checks, no database: the inventory routes, the reshaper and
the handlers share these.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from placement_wsgi import errors
from placement_wsgi.capacity import usable

#: Upper bound of the integer fields (32-bit signed columns).
MAX_INT = 2147483647

#: Keys of an inventory record as the API shows it, in display order.
OUTPUT_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")


@dataclasses.dataclass(frozen=True)
class Inventory:
    """One (provider, resource class) inventory record.

    ``allocation_ratio`` keeps the type it was given (a write response echoes
    the submitted ``2`` as ``2``); read back from storage it is a float.
    """

    resource_class: str
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = MAX_INT
    step_size: int = 1
    allocation_ratio: float = 1.0
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None

    @property
    def capacity(self) -> int:
        """Reported capacity: ``int((total - reserved) * allocation_ratio)``."""
        return usable(self.total, self.reserved, self.allocation_ratio)

    @property
    def modified_at(self) -> datetime.datetime | None:
        return self.updated_at or self.created_at

    def as_dict(self) -> dict[str, Any]:
        """The record's API representation (without generation)."""
        return {field: getattr(self, field) for field in OUTPUT_FIELDS}

    @classmethod
    def from_body(cls, resource_class: str, data: Mapping[str, Any]) -> Inventory:
        """A record from a (schema-valid) request body; defaults fill the gaps.

        Keys other than the record fields (``resource_provider_generation``,
        ``resource_class``) are ignored.
        """
        return cls(resource_class, **{key: data[key] for key in OUTPUT_FIELDS if key in data})


@dataclasses.dataclass(frozen=True)
class ProviderInventories:
    """A provider's generation and its complete inventory.

    Read back, the records are in class id order and ``provider_uuid`` may be
    left out (the route names the provider); as a reshaper target it names
    the provider and carries the generation the client saw.
    """

    generation: int
    inventories: list[Inventory]
    provider_uuid: str | None = None

    @property
    def modified_at(self) -> datetime.datetime | None:
        """Newest record change, or None when there are no records."""
        times = [record.modified_at for record in self.inventories]
        present = [when for when in times if when is not None]
        return max(present) if present else None


@dataclasses.dataclass(frozen=True)
class ProviderInventory:
    """One record plus the provider's generation (single-class routes)."""

    generation: int
    inventory: Inventory


class ResourceClassNotFound(errors.BadRequest):
    """``No such resource class <name>.``; callers add their route's prefix."""


class InvalidInventoryCapacity(errors.BadRequest):
    """A record's capacity is below what the microversion allows."""


class InventoryInUse(errors.InventoryInUse):
    """Classes that would be removed still have allocations."""

    def __init__(self, class_names: Sequence[str], provider_uuid: str) -> None:
        super().__init__(
            f"Inventory for '{', '.join(class_names)}' on resource provider "
            f"'{provider_uuid}' in use.")
        self.class_names = list(class_names)
        self.provider_uuid = provider_uuid


def check_capacity(records: Iterable[Inventory], provider_uuid: str,
                   version: tuple[int, int]) -> None:
    """400 for the first record whose capacity the microversion does not allow.

    Before 1.26 capacity must be positive; from 1.26 on zero is allowed
    (``reserved == total``).
    """
    zero_allowed = tuple(version) >= (1, 26)
    for record in records:
        capacity = record.capacity
        if capacity < 0 or (capacity == 0 and not zero_allowed):
            relation = "greater than" if zero_allowed else "greater than or equal to"
            raise InvalidInventoryCapacity(
                f"Invalid inventory for '{record.resource_class}' on resource provider "
                f"'{provider_uuid}'. The reserved value is {relation} total.")

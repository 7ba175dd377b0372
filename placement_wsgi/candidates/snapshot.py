"""What the combination step knows: the rows one request read, indexed for it."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from placement_wsgi.capacity import truncated


class InventoryRow(NamedTuple):
    """One inventory of a requested class, as the loader reads it."""

    provider: int
    resource_class: int
    #: ``(total - reserved) * allocation_ratio`` (:func:`placement_wsgi.capacity.capacity`),
    #: computed by the database: one field per row instead of three
    capacity: float
    min_unit: int
    max_unit: int
    step_size: int

    def room(self, used: int) -> int:
        """How much one allocation request may put here: ``min(capacity - used,
        max_unit)``, capacity int-truncated."""
        return min(truncated(self.capacity) - used, self.max_unit)


@dataclasses.dataclass
class Snapshot:
    """What the combination step knows about the providers that matter.

    ``inventories[rc][provider]`` is the :class:`InventoryRow` and
    ``usage[rc][provider]`` the sum of its allocations (absent: 0), for every
    provider with an inventory of a requested class.
    ``root_of``/``parent_of`` cover every provider with an inventory of a
    requested class, the sharing providers and, once loaded, the trees in
    ``tree_members``; so does ``uuid_of`` where trees exist. Without trees
    (``has_trees`` false: every provider is a root) ``uuid_of`` is filled
    only for the providers an answer shows (:meth:`Loader.load_uuids`):
    reading 10,000 uuids to show 1,000 was a fifth of a limited request.
    """

    has_trees: bool = False
    root_of: dict[int, int] = dataclasses.field(default_factory=dict)
    parent_of: dict[int, int | None] = dataclasses.field(default_factory=dict)
    uuid_of: dict[int, str] = dataclasses.field(default_factory=dict)
    inventories: dict[int, dict[int, InventoryRow]] = dataclasses.field(default_factory=dict)
    usage: dict[int, dict[int, int]] = dataclasses.field(default_factory=dict)
    trait_holders: dict[int, set[int]] = dataclasses.field(default_factory=dict)
    agg_members: dict[str, set[int]] = dataclasses.field(default_factory=dict)
    sharing: set[int] = dataclasses.field(default_factory=set)
    sharing_anchors: dict[int, set[int]] = dataclasses.field(default_factory=dict)
    in_tree_roots: dict[str, int] = dataclasses.field(default_factory=dict)
    #: root -> every provider of its tree; filled by :meth:`Loader.load_trees`
    tree_members: dict[int, list[int]] = dataclasses.field(default_factory=dict)
    _room: dict[tuple[int, int], int] = dataclasses.field(default_factory=dict)
    _traits: dict[int, frozenset[int]] = dataclasses.field(default_factory=dict)

    def room(self, provider: int, rc: int) -> int:
        """How much of ``rc`` one allocation request may put on ``provider``
        (:meth:`InventoryRow.room`), memoised."""
        key = (provider, rc)
        free = self._room.get(key)
        if free is None:
            free = self.inventories[rc][provider].room(self.usage.get(rc, {}).get(provider, 0))
            self._room[key] = free
        return free

    def traits_of(self, provider: int) -> frozenset[int]:
        """The provider's traits among those the request mentions."""
        found = self._traits.get(provider)
        if found is None:
            found = frozenset(trait for trait, holders in self.trait_holders.items()
                              if provider in holders)
            self._traits[provider] = found
        return found

"""A local model of resource-provider trees.

The compute side keeps what it last saw of Placement in a ``ProviderTree``:
one or more root providers (the compute node, plus every sharing provider
pulled in by aggregate), their descendants, and each provider's inventory,
traits, aggregates and generation. Virt drivers edit a copy of it in
``update_provider_tree``; the report client then compares the edited copy
with its cache and sends only the differences.

Contract points callers depend on:

* Lookups take a name or a uuid; a missing provider raises ``ValueError``.
* ``data()`` returns a snapshot: mutating it never changes the tree.
* Generations are only what Placement last reported; the tree never bumps
  them. ``update_inventory/traits/aggregates`` store a given generation even
  when the content is unchanged.
* Every public method holds one process-wide, non-reentrant lock shared by
  all trees, so trees may be used from several threads. Composite helpers
  (``has_sharing_provider``) take it several times and are not atomic.
* ``copy.deepcopy(tree)`` gives an independent tree sharing the lock.
"""

from __future__ import annotations

import collections
import copy
import threading
import uuid as uuid_module
from collections.abc import Iterable, Mapping
from typing import Any

import os_traits

#: Shared by every ProviderTree of the process, like nova's named
#: "provider-tree-lock". Not re-entrant: public methods never call each other
#: while holding it.
_LOCK = threading.Lock()

ProviderData = collections.namedtuple(
    "ProviderData",
    ["uuid", "name", "generation", "parent_uuid", "inventory", "traits", "aggregates",
     "resources"])
ProviderData.__doc__ = "Snapshot of one provider; the containers are copies."

ProviderIdentity = collections.namedtuple("ProviderIdentity", ["uuid", "name", "parent_uuid"])
ProviderIdentity.__doc__ = "Where a provider is: its uuid, name and parent (no copies)."


#: Types of values a record can share with its copy (immutable): a copy of JSON-shaped
#: data hands values of exactly these types back as they are.
ATOMIC_TYPES = frozenset({int, float, str, bool, type(None)})


def _copy_inventory(inventory: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What ``copy.deepcopy(dict(inventory))`` gives, without ``deepcopy`` for the
    usual records (dicts of plain numbers), which are copied flat; any other
    record (nested values, a dict subclass) goes through ``deepcopy`` and keeps
    its type. Snapshots, tree copies and every tree read store inventories so,
    hundreds of times per node, and ``deepcopy`` was a fifth of a migration's
    time (the records' sharing of one dict, which ``deepcopy`` would keep, is
    not kept)."""
    return {resource_class: (record.copy() if type(record) is dict
                             and ATOMIC_TYPES.issuperset(map(type, record.values()))
                             else copy.deepcopy(record))
            for resource_class, record in inventory.items()}


class _Provider:
    """One node: its own data plus its children in insertion order."""

    def __init__(self, name: str, uuid: str | None = None, generation: int | None = None,
                 parent_uuid: str | None = None) -> None:
        self.uuid = uuid or str(uuid_module.uuid4())
        self.name = name
        self.generation = generation
        self.parent_uuid = parent_uuid
        self.children: dict[str, _Provider] = {}
        self.inventory: dict[str, dict[str, Any]] = {}
        self.traits: set[str] = set()
        self.aggregates: set[str] = set()
        self.resources: dict[str, set[Any]] = {}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> _Provider:
        return cls(data["name"], uuid=data["uuid"], generation=data.get("generation"),
                   parent_uuid=data.get("parent_provider_uuid"))

    def snapshot(self) -> ProviderData:
        return ProviderData(
            self.uuid, self.name, self.generation, self.parent_uuid,
            _copy_inventory(self.inventory), set(self.traits), set(self.aggregates),
            copy.deepcopy(self.resources) if self.resources else {})

    def copied(self) -> _Provider:
        """An independent copy of this provider and its subtree."""
        twin = _Provider(self.name, uuid=self.uuid, generation=self.generation,
                         parent_uuid=self.parent_uuid)
        twin.children = {uuid: child.copied() for uuid, child in self.children.items()}
        twin.inventory = _copy_inventory(self.inventory)
        twin.traits = set(self.traits)
        twin.aggregates = set(self.aggregates)
        twin.resources = copy.deepcopy(self.resources) if self.resources else {}
        return twin

    def find(self, name_or_uuid: str) -> _Provider | None:
        """This provider or the first of its subtree (pre-order) with that uuid or
        name; a child's uuid is looked up before its elder siblings' subtrees."""
        if self.uuid == name_or_uuid or self.name == name_or_uuid:
            return self
        return self._find_below(name_or_uuid)

    def _find_below(self, name_or_uuid: str) -> _Provider | None:
        children = self.children
        found = children.get(name_or_uuid)
        if found is not None:
            return found
        for child in children.values():
            if child.uuid == name_or_uuid or child.name == name_or_uuid:
                return child
            if child.children:
                found = child._find_below(name_or_uuid)
                if found is not None:
                    return found
        return None

    def uuids_top_down(self) -> list[str]:
        result = [self.uuid]
        for child in self.children.values():
            result.extend(child.uuids_top_down())
        return result

    def set_generation(self, generation: int | None) -> None:
        if generation is not None:
            self.generation = generation

    def inventory_changed(self, new: Mapping[str, Mapping[str, Any]]) -> bool:
        current = self.inventory
        if set(current) != set(new):
            return True
        for resource_class, cached in current.items():
            for field, value in new[resource_class].items():
                # Fields the caller left out are not a change (Placement
                # fills in defaults the caller need not repeat).
                if field not in cached or cached[field] != value:
                    return True
        return False


class ProviderTree:
    """Roots (and their subtrees) of what the compute host knows of Placement."""

    def __init__(self) -> None:
        self.lock = _LOCK
        self.roots_by_uuid: dict[str, _Provider] = {}
        self.roots_by_name: dict[str, _Provider] = {}

    # -- pickling / copying -------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.lock = _LOCK

    def __deepcopy__(self, memo: dict[int, Any]) -> ProviderTree:
        """An independent tree sharing the lock, built provider by provider (what
        ``copy.deepcopy`` gives, several times faster: trees are copied twice
        per node and simulation)."""
        twin = ProviderTree()
        with self.lock:
            twin.roots_by_uuid = {uuid: root.copied() for uuid, root in self.roots_by_uuid.items()}
            twin.roots_by_name = {name: twin.roots_by_uuid[root.uuid]
                                  for name, root in self.roots_by_name.items()}
        memo[id(self)] = twin
        return twin

    @property
    def roots(self) -> list[_Provider]:
        """The root nodes, in the order they were added."""
        return list(self.roots_by_uuid.values())

    # -- internals (caller holds the lock) ------------------------------------

    def _lookup(self, name_or_uuid: str) -> _Provider | None:
        found = self.roots_by_uuid.get(name_or_uuid) or self.roots_by_name.get(name_or_uuid)
        if found is not None:
            return found
        for root in self.roots_by_uuid.values():
            found = root.find(name_or_uuid)
            if found is not None:
                return found
        return None

    def _find(self, name_or_uuid: str) -> _Provider:
        found = self._lookup(name_or_uuid)
        if found is None:
            raise ValueError(f"No such provider {name_or_uuid}")
        return found

    def _exists(self, name_or_uuid: str) -> bool:
        return self._lookup(name_or_uuid) is not None

    def _add_root(self, provider: _Provider) -> None:
        self.roots_by_uuid[provider.uuid] = provider
        self.roots_by_name[provider.name] = provider

    def _remove(self, name_or_uuid: str) -> None:
        found = self._find(name_or_uuid)
        if found.parent_uuid:
            parent = self._find(found.parent_uuid)
            del parent.children[found.uuid]
            return
        del self.roots_by_uuid[found.uuid]
        if self.roots_by_name.get(found.name) is found:
            del self.roots_by_name[found.name]

    # -- structure ----------------------------------------------------------

    def new_root(self, name: str, uuid: str, generation: int | None = None) -> str:
        """Add a root provider; ``ValueError`` if ``uuid`` is already in the tree."""
        with self.lock:
            if self._exists(uuid):
                raise ValueError(f"Provider {uuid} already exists.")
            provider = _Provider(name, uuid=uuid, generation=generation)
            self._add_root(provider)
            return provider.uuid

    def new_child(self, name: str, parent: str, uuid: str | None = None,
                  generation: int | None = None) -> str:
        """Add a child of ``parent`` (name or uuid); a uuid is generated when None.

        ``ValueError`` if the uuid (or, without a uuid, the name) is taken or
        the parent is not in the tree.
        """
        with self.lock:
            if self._exists(uuid or name):
                raise ValueError(f"Provider {uuid or name} already exists.")
            parent_node = self._find(parent)
            provider = _Provider(name, uuid=uuid, generation=generation,
                                 parent_uuid=parent_node.uuid)
            parent_node.children[provider.uuid] = provider
            return provider.uuid

    def remove(self, name_or_uuid: str) -> None:
        """Remove the provider and its whole subtree; ``ValueError`` if missing."""
        with self.lock:
            self._remove(name_or_uuid)

    def exists(self, name_or_uuid: str) -> bool:
        with self.lock:
            return self._exists(name_or_uuid)

    def data(self, name_or_uuid: str) -> ProviderData:
        """A snapshot of one provider (copies of inventory, traits, ...)."""
        with self.lock:
            return self._find(name_or_uuid).snapshot()

    def identity(self, name_or_uuid: str) -> ProviderIdentity:
        """The provider's uuid, name and parent uuid: what :meth:`data` gives of
        them, without copying its inventory, traits and aggregates (the checks look
        providers up by name hundreds of times per node)."""
        with self.lock:
            found = self._find(name_or_uuid)
            return ProviderIdentity(found.uuid, found.name, found.parent_uuid)

    def get_provider_uuids(self, name_or_uuid: str | None = None) -> list[str]:
        """Uuids top-down (pre-order): one subtree, or every root's subtree."""
        with self.lock:
            if name_or_uuid is not None:
                return self._find(name_or_uuid).uuids_top_down()
            result: list[str] = []
            for root in self.roots_by_uuid.values():
                result.extend(root.uuids_top_down())
            return result

    def get_provider_uuids_in_tree(self, name_or_uuid: str) -> list[str]:
        """The whole tree containing the provider, top-down (root first)."""
        with self.lock:
            node = self._find(name_or_uuid)
            while node.parent_uuid:
                node = self._find(node.parent_uuid)
            return node.uuids_top_down()

    def populate_from_iterable(self, provider_dicts: Iterable[Mapping[str, Any]]) -> None:
        """Insert or replace providers given in ``GET /resource_providers`` shape.

        Parents are inserted before children whatever the input order. A
        provider already present is replaced by an empty one (its subtree is
        dropped unless also in the input). Every parent must be in the tree
        or the input, else ``ValueError`` before anything changes.
        """
        pending = {data["uuid"]: data for data in provider_dicts}
        if not pending:
            return
        with self.lock:
            missing = sorted({
                data["parent_provider_uuid"] for data in pending.values()
                if data.get("parent_provider_uuid")
                and data["parent_provider_uuid"] not in pending
                and not self._exists(data["parent_provider_uuid"])})
            if missing:
                raise ValueError(
                    "The following parents were not found: " + ", ".join(missing))
            while pending:
                ready = next((uuid for uuid, data in pending.items()
                              if data.get("parent_provider_uuid") not in pending), None)
                if ready is None:
                    raise ValueError(
                        "Providers form a parent cycle: " + ", ".join(sorted(pending)))
                data = pending.pop(ready)
                if self._exists(ready):
                    self._remove(ready)
                provider = _Provider.from_dict(data)
                if provider.parent_uuid:
                    parent = self._find(provider.parent_uuid)
                    parent.children[provider.uuid] = provider
                else:
                    self._add_root(provider)

    # -- inventory ------------------------------------------------------------

    def has_inventory(self, name_or_uuid: str) -> bool:
        with self.lock:
            return bool(self._find(name_or_uuid).inventory)

    def has_inventory_changed(self, name_or_uuid: str,
                              inventory: Mapping[str, Mapping[str, Any]]) -> bool:
        """True if ``inventory`` differs from the cached one.

        Different resource classes, a field the cache lacks, or a field both
        have with different values is a change; fields absent from
        ``inventory`` are ignored.
        """
        with self.lock:
            return self._find(name_or_uuid).inventory_changed(inventory)

    def update_inventory(self, name_or_uuid: str, inventory: Mapping[str, Mapping[str, Any]],
                         generation: int | None = None) -> bool:
        """Store ``generation`` (if given) and, when changed, a copy of ``inventory``."""
        with self.lock:
            provider = self._find(name_or_uuid)
            provider.set_generation(generation)
            if not provider.inventory_changed(inventory):
                return False
            provider.inventory = _copy_inventory(inventory)
            return True

    def has_sharing_provider(self, resource_class: str) -> bool:
        """Whether some provider has ``resource_class`` inventory and shares it."""
        for uuid in self.get_provider_uuids():
            data = self.data(uuid)
            if (resource_class in data.inventory
                    and os_traits.MISC_SHARES_VIA_AGGREGATE in data.traits):
                return True
        return False

    # -- traits -------------------------------------------------------------

    def has_traits(self, name_or_uuid: str, traits: Iterable[str]) -> bool:
        """True iff the provider has all of ``traits`` (vacuously for none)."""
        with self.lock:
            return set(traits) <= self._find(name_or_uuid).traits

    def have_traits_changed(self, name_or_uuid: str, traits: Iterable[str]) -> bool:
        with self.lock:
            return set(traits) != self._find(name_or_uuid).traits

    def update_traits(self, name_or_uuid: str, traits: Iterable[str],
                      generation: int | None = None) -> bool:
        """Replace the trait set; store ``generation`` if given; True if changed."""
        with self.lock:
            provider = self._find(name_or_uuid)
            provider.set_generation(generation)
            new = set(traits)
            if new == provider.traits:
                return False
            provider.traits = new
            return True

    def add_traits(self, name_or_uuid: str, *traits: str) -> None:
        """Add traits (generation untouched)."""
        with self.lock:
            provider = self._find(name_or_uuid)
            provider.traits = provider.traits | set(traits)

    def remove_traits(self, name_or_uuid: str, *traits: str) -> None:
        """Remove traits (generation untouched)."""
        with self.lock:
            provider = self._find(name_or_uuid)
            provider.traits = provider.traits - set(traits)

    # -- aggregates -----------------------------------------------------------

    def in_aggregates(self, name_or_uuid: str, aggregates: Iterable[str]) -> bool:
        """True iff the provider is in all of ``aggregates`` (vacuously for none)."""
        with self.lock:
            return set(aggregates) <= self._find(name_or_uuid).aggregates

    def have_aggregates_changed(self, name_or_uuid: str, aggregates: Iterable[str]) -> bool:
        with self.lock:
            return set(aggregates) != self._find(name_or_uuid).aggregates

    def update_aggregates(self, name_or_uuid: str, aggregates: Iterable[str],
                          generation: int | None = None) -> bool:
        """Replace the aggregate set; store ``generation`` if given; True if changed."""
        with self.lock:
            provider = self._find(name_or_uuid)
            provider.set_generation(generation)
            new = set(aggregates)
            if new == provider.aggregates:
                return False
            provider.aggregates = new
            return True

    def add_aggregates(self, name_or_uuid: str, *aggregates: str) -> None:
        with self.lock:
            provider = self._find(name_or_uuid)
            provider.aggregates = provider.aggregates | set(aggregates)

    def remove_aggregates(self, name_or_uuid: str, *aggregates: str) -> None:
        with self.lock:
            provider = self._find(name_or_uuid)
            provider.aggregates = provider.aggregates - set(aggregates)

    # -- assignable resources (never sent to Placement) -----------------------

    def update_resources(self, name_or_uuid: str,
                         resources: Mapping[str, set[Any]]) -> bool:
        """Replace the resource-class -> set-of-resources map if different."""
        with self.lock:
            provider = self._find(name_or_uuid)
            if provider.resources == resources:
                return False
            provider.resources = copy.deepcopy(dict(resources))
            return True

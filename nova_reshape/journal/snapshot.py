"""One node's provider tree and its consumers, as the journal keeps it.

A :class:`Snapshot` is what a revert needs to put a node back and what it
compares to tell whether anyone wrote to the node since: every provider of
the node's tree (uuid, name, parent; root first, parents before children),
their inventories, traits and aggregates, and the complete allocations of
every consumer holding anything in the tree, with project, user and
consumer generation. Provider generations are kept for reading but never
compared: a revert moves them forward, as every Placement write does.

Two builders give the same snapshot of the same state: :func:`of_state`
from the bulk read's :class:`~placement_wsgi.objects.tree_state.TreeState`
(what a write's transaction reads) and :func:`of_tree` from a
:class:`~nova_reshape.provider_tree.ProviderTree` and the allocations read
with it (what the migration planned from). :func:`differences` names, one
short phrase each, what differs between two snapshots.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from nova_reshape.provider_tree import ProviderTree
from placement_wsgi.objects.tree_state import TreeState

#: The keys of a consumer's entry besides its allocations.
OWNER_KEYS = ("project_id", "user_id", "consumer_generation")


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """One node's tree and consumers (see the module docstring); plain JSON values.

    ``providers``: ``{"uuid", "name", "parent", "generation"}`` top-down;
    ``inventories``: uuid -> class -> record (total, reserved, min_unit,
    max_unit, step_size, allocation_ratio); ``traits``/``aggregates``:
    uuid -> sorted list (every provider has an entry); ``allocations``:
    consumer -> ``{"allocations": {uuid: {class: amount}}, "project_id",
    "user_id", "consumer_generation"}``.
    """

    root: str
    providers: list[dict[str, Any]]
    inventories: dict[str, dict[str, dict[str, Any]]]
    traits: dict[str, list[str]]
    aggregates: dict[str, list[str]]
    allocations: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict sharing the snapshot's values (plain JSON values
        already: no copy, which would cost more than the JSON encoding)."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Snapshot:
        return cls(**{field.name: data[field.name] for field in dataclasses.fields(cls)})

    @property
    def by_uuid(self) -> dict[str, dict[str, Any]]:
        return {provider["uuid"]: provider for provider in self.providers}

    def normalized(self) -> dict[str, Any]:
        """Everything compared: the snapshot without provider generations."""
        data = dict(self.to_dict())
        data["providers"] = [{key: value for key, value in provider.items()
                              if key != "generation"} for provider in self.providers]
        return data


def _record(record: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key != "resource_provider_generation"}


def _consumer(body: Mapping[str, Any]) -> dict[str, Any]:
    """A consumer's entry from its ``GET /allocations/{consumer}`` body (1.28)."""
    return {"allocations": {rp: dict(entry["resources"])
                            for rp, entry in sorted(body.get("allocations", {}).items())},
            **{key: body.get(key) for key in OWNER_KEYS}}


def _top_down(providers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One order for every reader: by depth (parents before children), then uuid."""
    parents = {provider["uuid"]: provider["parent"] for provider in providers}

    def depth(uuid: str) -> int:
        level = 0
        while parents.get(uuid) in parents:
            uuid, level = parents[uuid], level + 1
        return level

    return sorted(providers, key=lambda provider: (depth(provider["uuid"]), provider["uuid"]))


def _build(root: str, providers: Iterable[tuple[str, str, str | None, int | None]],
           inventory: Any, traits: Any, aggregates: Any,
           allocations: Mapping[str, Any]) -> Snapshot:
    listed = _top_down([{"uuid": uuid, "name": name, "parent": parent, "generation": generation}
                        for uuid, name, parent, generation in providers])
    uuids = [provider["uuid"] for provider in listed]
    return Snapshot(
        root=root, providers=listed,
        inventories={uuid: {rc: _record(record) for rc, record in sorted(inventory(uuid).items())}
                     for uuid in uuids},
        traits={uuid: sorted(traits(uuid)) for uuid in uuids},
        aggregates={uuid: sorted(aggregates(uuid)) for uuid in uuids},
        allocations={consumer: _consumer(body) for consumer, body in sorted(allocations.items())})


#: A consumer holding nothing, as a snapshot keeps it (``GET /allocations`` of none).
NO_CONSUMER: Mapping[str, Any] = {"allocations": {}, "project_id": None, "user_id": None,
                                  "consumer_generation": None}


def of_state(state: TreeState,
             outside: Mapping[str, Mapping[str, Any] | None] | None = None) -> Snapshot:
    """The snapshot of a tree as the bulk read returns it (sharing providers left out).

    ``outside``: consumers a write touched that hold nothing in the tree (any
    more, or yet), with their ``GET /allocations`` body (None: they hold
    nothing at all), so that a consumer whose allocations left the tree is
    still compared and put back; consumers of the tree are taken from the tree.
    """
    allocations: Mapping[str, Any] = state.allocations
    if outside:
        allocations = {**{consumer: body or NO_CONSUMER for consumer, body in outside.items()},
                       **state.allocations}
    return _build(state.root,
                  ((p["uuid"], p["name"], p["parent_provider_uuid"], p["generation"])
                   for p in state.providers),
                  lambda uuid: state.inventories.get(uuid, {}),
                  lambda uuid: state.traits.get(uuid, []),
                  lambda uuid: state.aggregates.get(uuid, []), allocations)


def absent(root: str) -> Snapshot:
    """The snapshot of a node that has no provider at all: what a run that created
    the node records as its "before" (reverting it deletes the whole tree)."""
    return Snapshot(root=root, providers=[], inventories={}, traits={}, aggregates={},
                    allocations={})


def of_tree(tree: ProviderTree, root: str, allocations: Mapping[str, Any]) -> Snapshot:
    """The snapshot of ``root``'s subtree of ``tree`` and the consumers read with it."""
    data = {uuid: tree.data(uuid) for uuid in tree.get_provider_uuids(root)}
    return _build(root,
                  ((d.uuid, d.name, d.parent_uuid, d.generation) for d in data.values()),
                  lambda uuid: data[uuid].inventory, lambda uuid: data[uuid].traits,
                  lambda uuid: data[uuid].aggregates, allocations)


def _changed(label: str, before: Any, after: Any) -> list[str]:
    return [] if before == after else [label]


def _set_change(label: str, before: list[str], after: list[str]) -> list[str]:
    added, gone = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    if not added and not gone:
        return []
    parts = [f"+{name}" for name in added] + [f"-{name}" for name in gone]
    return [f"{label} {' '.join(parts)}"]


def _provider_differences(expected: Snapshot, actual: Snapshot) -> list[str]:
    found = []
    was, now = expected.by_uuid, actual.by_uuid
    found += [f"provider {uuid} ({was[uuid]['name']}) is gone" for uuid in was if uuid not in now]
    found += [f"provider {uuid} ({now[uuid]['name']}) is new" for uuid in now if uuid not in was]
    for uuid in (uuid for uuid in was if uuid in now):
        name = now[uuid]["name"]
        found += _changed(f"provider {name} renamed from {was[uuid]['name']}",
                          was[uuid]["name"], name)
        found += _changed(f"provider {name} has another parent", was[uuid]["parent"],
                          now[uuid]["parent"])
        for rc in sorted(set(expected.inventories[uuid]) | set(actual.inventories[uuid])):
            before = expected.inventories[uuid].get(rc)
            after = actual.inventories[uuid].get(rc)
            if before != after:
                what = ("added" if before is None else "removed" if after is None
                        else f"total {before['total']} -> {after['total']}"
                        if before["total"] != after["total"] else "changed")
                found.append(f"inventory {rc} of {name} {what}")
        found += _set_change(f"traits of {name}", expected.traits[uuid], actual.traits[uuid])
        found += _set_change(f"aggregates of {name}", expected.aggregates[uuid],
                             actual.aggregates[uuid])
    return found


def _holds_nothing(body: Mapping[str, Any] | None) -> bool:
    """A consumer unknown to a snapshot, or known to hold nothing (:data:`NO_CONSUMER`)."""
    return body is None or not body.get("allocations")


def _consumer_differences(expected: Snapshot, actual: Snapshot) -> list[str]:
    found = []
    for consumer in sorted(set(expected.allocations) | set(actual.allocations)):
        before, after = expected.allocations.get(consumer), actual.allocations.get(consumer)
        if _holds_nothing(before) and _holds_nothing(after):
            continue  # Placement keeps no consumer without allocations: the same
        if before is None or after is None:
            found.append(f"consumer {consumer} {'left' if after is None else 'arrived in'} "
                         "the tree")
        elif before["consumer_generation"] != after["consumer_generation"]:
            found.append(f"consumer {consumer} generation {before['consumer_generation']} -> "
                         f"{after['consumer_generation']}")
        elif before != after:
            found.append(f"consumer {consumer} allocations changed")
    return found


def differences(expected: Snapshot, actual: Snapshot, *,
                consumer_generations: bool = True) -> list[str]:
    """What differs from ``expected`` in ``actual``, one phrase each (empty: the same).

    Provider generations are never compared; consumer generations only when
    ``consumer_generations`` (a revert compares them with the run's "after";
    its own result with the "before", whose generations it moves forward).
    """
    if not consumer_generations:
        expected, actual = _without_consumer_generations(expected), \
            _without_consumer_generations(actual)
    return _provider_differences(expected, actual) + _consumer_differences(expected, actual)


def _without_consumer_generations(snapshot: Snapshot) -> Snapshot:
    return dataclasses.replace(snapshot, allocations={
        consumer: {**body, "consumer_generation": None}
        for consumer, body in snapshot.allocations.items()})

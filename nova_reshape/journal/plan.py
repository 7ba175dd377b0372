"""What putting one node back takes: its tree as it is now -> its journaled "before".

:func:`change_for` computes the one
:class:`~placement_wsgi.objects.tree_change.TreeChange` that turns the
node's current snapshot into its "before" snapshot: the providers the run
created are deleted (children first), the ones it deleted are created again
with their uuids, names and parents (parents first), every provider's
inventory, traits and aggregates that differ are set back, and every
consumer whose allocations differ gets its "before" allocations (project
and user too), at its current consumer generation. When allocations move
the change is a reshape (inventories and allocations in one step, as
``POST /reshaper``); otherwise inventories are replaced as ``PUT
.../inventories`` does. Generations are the current ones: the write moves
them forward.

:func:`describe` renders a change as plain data: what a dry run prints and
what the real revert then writes are the same document.
"""

from __future__ import annotations

import collections
from typing import Any

from nova_reshape.journal.snapshot import Snapshot
from placement_wsgi.objects.allocation import ConsumerAllocations
from placement_wsgi.objects.inventory_record import Inventory
from placement_wsgi.objects.resource_provider import NewProvider
from placement_wsgi.objects.tree_change import TreeChange


class CannotRevert(Exception):
    """The node differs from its "before" in a way no tree change can undo (one line)."""


def _check_kept(before: Snapshot, current: Snapshot) -> None:
    was, now = before.by_uuid, current.by_uuid
    for uuid in sorted(set(was) & set(now)):
        if was[uuid]["name"] != now[uuid]["name"]:
            raise CannotRevert(f"provider {uuid} was renamed from {was[uuid]['name']} to "
                               f"{now[uuid]['name']}; a revert does not rename")
        if was[uuid]["parent"] != now[uuid]["parent"]:
            raise CannotRevert(f"provider {now[uuid]['name']} has another parent; a revert "
                               "does not move providers")


def _inventory(records: dict[str, dict[str, Any]]) -> list[Inventory]:
    return [Inventory.from_body(rc, record) for rc, record in sorted(records.items())]


def _consumers(before: Snapshot, current: Snapshot) -> list[ConsumerAllocations]:
    moved = []
    tree = set(current.by_uuid) | set(before.by_uuid)
    for consumer in sorted(set(before.allocations) | set(current.allocations)):
        was, now = before.allocations.get(consumer), current.allocations.get(consumer)
        if now is None:
            raise CannotRevert(f"consumer {consumer} no longer holds anything in the tree")
        if was is None:  # arrived in the tree: keep what it holds elsewhere only
            was = {**now, "allocations": {rp: amounts for rp, amounts in
                                          now["allocations"].items() if rp not in tree}}
        if (was["allocations"], was["project_id"], was["user_id"]) == (
                now["allocations"], now["project_id"], now["user_id"]):
            continue
        # Taken back from every provider (it held nothing before): the owner is
        # the current one, so that no owner the write does not need is created.
        owner = was if was["allocations"] else now
        moved.append(ConsumerAllocations(
            consumer_uuid=consumer, project_id=owner["project_id"] or "",
            user_id=owner["user_id"] or "",
            allocations={rp: dict(amounts) for rp, amounts in sorted(was["allocations"].items())},
            consumer_generation=now["consumer_generation"]))
    return moved


def change_for(before: Snapshot, current: Snapshot) -> TreeChange:
    """The change from ``current`` back to ``before`` (empty when they agree);
    :class:`CannotRevert` for a renamed or moved provider."""
    _check_kept(before, current)
    was, now = before.by_uuid, current.by_uuid
    change = TreeChange(
        create=[NewProvider(p["name"], p["uuid"], p["parent"]) for p in before.providers
                if p["uuid"] not in now],
        delete=[p["uuid"] for p in reversed(current.providers) if p["uuid"] not in was])
    for uuid in was:
        for what, wanted, found in (("traits", before.traits, current.traits),
                                    ("aggregates", before.aggregates, current.aggregates)):
            if wanted[uuid] != found.get(uuid, []):
                getattr(change, what)[uuid] = list(wanted[uuid])
        if before.inventories[uuid] != current.inventories.get(uuid, {}):
            change.inventories[uuid] = _inventory(before.inventories[uuid])
    for uuid in change.delete:
        if current.inventories[uuid]:
            change.inventories[uuid] = []
    change.allocations = _consumers(before, current)
    change.reshape = bool(change.allocations)
    generations = {p["uuid"]: p["generation"] for p in current.providers}
    change.generations = {uuid: generations[uuid] for uuid in change.existing}
    return change


def is_empty(change: TreeChange) -> bool:
    """Whether ``change`` writes nothing."""
    return not (change.create or change.delete or change.traits or change.aggregates
                or change.inventories or change.allocations)


def describe(change: TreeChange) -> dict[str, Any]:
    """``change`` as plain, ordered data (generations left out: they are the write's)."""
    return {
        "create": [{"uuid": p.uuid, "name": p.name, "parent": p.parent_uuid}
                   for p in change.create],
        "delete": list(change.delete),
        "traits": {uuid: list(names) for uuid, names in sorted(change.traits.items())},
        "aggregates": {uuid: list(uuids) for uuid, uuids in sorted(change.aggregates.items())},
        "inventories": {uuid: {record.resource_class: record.as_dict() for record in records}
                        for uuid, records in sorted(change.inventories.items())},
        "allocations": {consumer.consumer_uuid: {"allocations": consumer.allocations,
                                                 "project_id": consumer.project_id,
                                                 "user_id": consumer.user_id}
                        for consumer in change.allocations},
    }


def summary(description: dict[str, Any]) -> str:
    """One line saying how much a described change writes."""
    counts = [(len(description["create"]), "provider(s) created"),
              (len(description["delete"]), "provider(s) deleted"),
              (len(description["inventories"]), "inventories set"),
              (len(description["traits"]), "trait sets"),
              (len(description["aggregates"]), "aggregate sets"),
              (len(description["allocations"]), "consumer(s) moved back")]
    return ", ".join(f"{count} {what}" for count, what in counts if count) or "nothing"


def outline(snapshot: Snapshot) -> list[str]:
    """The node in a few words, one line per provider (top-down): its name, its
    inventory totals and how many consumers hold something on it (what the revert
    report shows before and after)."""
    held: collections.Counter[str] = collections.Counter(
        rp for body in snapshot.allocations.values() for rp in body["allocations"])
    lines = []
    for provider in snapshot.providers:
        uuid = provider["uuid"]
        totals = ", ".join(f"{rc} {record['total']}" for rc, record in
                           sorted(snapshot.inventories.get(uuid, {}).items()))
        lines.append(f"{provider['name']}: {totals or 'no inventory'}; "
                     f"{held[uuid]} consumer(s)")
    return lines

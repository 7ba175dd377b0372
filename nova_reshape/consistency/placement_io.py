"""heal_allocations' reads of Placement and its writes, in bulk where the transport allows.

Reads. In-process on the database (:func:`nova_reshape.transport.direct.on_database`)
every tree is read in a few set-based statements per batch
(:meth:`~nova_reshape.transport.direct.DirectTransport.read_trees`): every
consumer's ``GET /allocations/{consumer}`` body at 1.28 and, for
``--heal-nested``, each tree's providers, inventories and usage. Over
``--placement-url`` Placement offers no bulk read of consumers: a
consumer's allocations are read when an instance needs them (one
``GET /allocations/{uuid}`` each, as nova does) and a tree when an
instance on it is healed nested.

Writes. Heals are sent :data:`BATCH` consumers at a time in one
``POST /allocations`` at 1.28 (nova's ``PUT /allocations/{uuid}``
microversion: the consumer type is left unset, as nova leaves it); a
batch Placement refuses is sent again one ``PUT`` per instance, in order,
so exactly the instances before the refused one are written, as nova's
one-by-one run leaves it. In-process on the database
(:func:`write_journaled`) the same batches are written, each in one
transaction with the nodes it touches journaled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from nova_reshape.consistency.journaled_writes import JournaledWrites, Touch
from nova_reshape.consistency.nested import TreeView
from nova_reshape.consistency.placement_reads import PlacementReadError, error_line
from nova_reshape.transport.base import Placement
from nova_reshape.transport.direct import on_database
from placement_wsgi import errors
from placement_wsgi.objects.allocation import ConsumerAllocations

#: nova's microversion for reading and writing a consumer's allocations.
CONSUMER_VERSION = "1.28"
#: Listing a tree's providers.
TREE_VERSION = "1.14"
#: Consumers per ``POST /allocations``.
BATCH = 500

NO_ALLOCATIONS: Mapping[str, Any] = {"allocations": {}}




class PlacementState:
    """Consumers' allocations and compute trees, read as the transport allows."""

    def __init__(self, placement: Placement, trees: bool = False,
                 per_consumer: bool = False) -> None:
        """``per_consumer``: read each consumer when asked, through the API, even
        in-process (for callers that ask about a few consumers only)."""
        self.placement = placement
        self.bulk = None if per_consumer else on_database(placement)
        self.consumers: dict[str, Mapping[str, Any]] = {}
        self.trees: dict[str, TreeView] = {}
        if self.bulk is not None:
            self._read_all(trees)

    def _read_all(self, trees: bool) -> None:
        assert self.bulk is not None
        for state in self.bulk.read_trees():
            self.consumers.update(state.allocations)
            if trees:
                self.trees[state.root] = _tree_view(state.root, state.providers,
                                                    state.inventories, state.allocations)

    def allocations_of(self, consumer: str) -> Mapping[str, Any]:
        """``GET /allocations/{consumer}`` at 1.28 (``{"allocations": {}}`` when none)."""
        if self.bulk is not None:
            return self.consumers.get(consumer, NO_ALLOCATIONS)
        if consumer not in self.consumers:
            response = self.placement.request("GET", f"/allocations/{consumer}",
                                              microversion=CONSUMER_VERSION)
            if not response:
                raise PlacementReadError(error_line(response, f"allocations of {consumer}"))
            self.consumers[consumer] = response.json()
        return self.consumers[consumer]

    def tree(self, root: str) -> TreeView | None:
        """The tree of compute node provider ``root``; None when Placement has none."""
        if self.bulk is None and root not in self.trees:
            view = self._read_tree(root)
            if view is None:
                return None
            self.trees[root] = view
        return self.trees.get(root)

    def _read_tree(self, root: str) -> TreeView | None:
        response = self.placement.request("GET", f"/resource_providers?in_tree={root}",
                                          microversion=TREE_VERSION)
        if not response:
            raise PlacementReadError(error_line(response, f"provider tree of {root}"))
        providers = response.json()["resource_providers"]
        if not providers:
            return None
        providers.sort(key=lambda p: p["uuid"] != root)
        inventories, usages = {}, {}
        for provider in providers:
            uuid = provider["uuid"]
            inventories[uuid] = self._read(f"/resource_providers/{uuid}/inventories",
                                           "inventories")
            usages[uuid] = self._read(f"/resource_providers/{uuid}/usages", "usages")
        return TreeView(root, providers, inventories, usages)

    def _read(self, url: str, key: str) -> dict[str, Any]:
        response = self.placement.request("GET", url, microversion=TREE_VERSION)
        if not response:
            raise PlacementReadError(error_line(response, url))
        return dict(response.json()[key])


def _tree_view(root: str, providers: Sequence[Mapping[str, Any]],
               inventories: Mapping[str, Mapping[str, Any]],
               allocations: Mapping[str, Mapping[str, Any]]) -> TreeView:
    members = {provider["uuid"] for provider in providers}
    usages: dict[str, dict[str, int]] = {}
    for body in allocations.values():
        for uuid, entry in body["allocations"].items():
            if uuid in members:
                used = usages.setdefault(uuid, {})
                for rc, amount in entry["resources"].items():
                    used[rc] = used.get(rc, 0) + amount
    return TreeView(root, list(providers), {uuid: dict(inventories.get(uuid, {}))
                                            for uuid in members}, usages)


@dataclasses.dataclass(frozen=True)
class Written:
    """What a write left: how many consumers were written, in order, and the first
    refusal (consumer uuid, Placement's reason), None when all were."""

    count: int
    refused: tuple[str, str] | None = None


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def write(placement: Placement, bodies: Sequence[tuple[str, Mapping[str, Any]]],
          done: Callable[[int, int], None] | None = None, batch: int = BATCH) -> Written:
    """Write each ``(consumer, PUT /allocations body)`` in order (see the module);
    ``done(count, total)`` after every batch."""
    count = 0
    for chunk in _batches(bodies, batch):
        response = placement.request("POST", "/allocations", json=dict(chunk),
                                     microversion=CONSUMER_VERSION)
        if response.status_code != 204:
            for consumer, body in chunk:
                one = placement.request("PUT", f"/allocations/{consumer}", json=dict(body),
                                        microversion=CONSUMER_VERSION)
                if one.status_code != 204:
                    return Written(count, (consumer, error_line(one, "Placement refused")))
                count += 1
        else:
            count += len(chunk)
        if done:
            done(count, len(bodies))
    return Written(count)


def write_journaled(writes: JournaledWrites,
                    bodies: Sequence[tuple[str, Mapping[str, Any], Sequence[Touch]]],
                    done: Callable[[int, int], None] | None = None,
                    batch: int = BATCH) -> Written:
    """:func:`write` in-process: each ``(consumer, body, touches)`` written as its
    ``POST /allocations`` batch or ``PUT`` writes it, a batch per transaction with
    the nodes of ``touches`` journaled in it (:mod:`.journaled_writes`); a batch
    Placement refuses is rolled back and written again one consumer per
    transaction, in order, up to the refused one."""
    count = 0
    for chunk in _batches(bodies, batch):
        try:
            writes.write([touch for _, _, touches in chunk for touch in touches],
                         lambda requests, chunk=chunk: requests.put_allocations(
                             [consumer_request(consumer, body) for consumer, body, _ in chunk]))
            count += len(chunk)
        except errors.PlacementError:
            for consumer, body, touches in chunk:
                try:
                    writes.write(touches, lambda requests, consumer=consumer, body=body:
                                 requests.put_allocations([consumer_request(consumer, body)]))
                except errors.PlacementError as error:
                    return Written(count, (consumer, f"Placement refused: HTTP {error.status}: "
                                                     f"{' '.join(str(error).split())}"))
                count += 1
        if done:
            done(count, len(bodies))
    return Written(count)


def consumer_request(consumer: str, body: Mapping[str, Any]) -> ConsumerAllocations:
    """A ``PUT /allocations/{consumer}`` body at 1.28 as the write it asks for."""
    return ConsumerAllocations(consumer, body.get("project_id") or "",
                               body.get("user_id") or "", resources_of(body),
                               consumer_generation=body.get("consumer_generation"))


def allocation_body(allocations: Mapping[str, Mapping[str, int]], project_id: str | None,
                    user_id: str | None, generation: int | None) -> dict[str, Any]:
    """A ``PUT /allocations/{consumer}`` body at 1.28."""
    return {"allocations": {uuid: {"resources": dict(resources)}
                            for uuid, resources in allocations.items()},
            "project_id": project_id, "user_id": user_id, "consumer_generation": generation}


def resources_of(body: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Provider -> class -> amount of a ``GET /allocations/{consumer}`` body."""
    return {uuid: dict(entry["resources"]) for uuid, entry in body["allocations"].items()}



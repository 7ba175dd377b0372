"""Writing one node's :class:`~nova_reshape.compute.plan.NodePlan` to Placement.

The plan already says every write the node needs, so the run sends exactly
those writes instead of letting a report client rediscover them (a tree
read, then inventory, traits and aggregates per provider, then the
allocations of every consumer).

In-process on the database (:func:`~nova_reshape.transport.direct.on_database`)
the whole plan is ONE call (:func:`write_in_transaction`),
:meth:`~nova_reshape.transport.base.TreeWriter.apply_tree_change`, which
writes it in one database transaction with the same object functions and
checks the API requests below run (see
:mod:`placement_wsgi.objects.tree_change`). A run killed at any moment
leaves the node either as it was or fully written. A stale generation is
:class:`~nova_reshape.exception.PlacementReshapeConflict`, as for the
reshaper.

Over the API (no such call) the plan is the sequence of requests
(:class:`RestPlanWriter`), in this order:

1. the custom traits and resource classes the plan uses that the run has
   not yet seen exist (once per run, ``PUT /traits/{name}``,
   ``PUT /resource_classes/{name}``; both idempotent);
2. ``POST /resource_providers`` for each provider to create, parents first
   (created empty: nothing can be scheduled on them; a 409, the name or uuid
   taken since the check, is a conflict: the node is read and planned again);
3. ``PUT .../traits`` and ``PUT .../aggregates`` for each provider whose
   traits or aggregates the plan changes;
4. the node's one atomic ``POST /reshaper`` (every provider's final
   inventory, the leaving providers emptied, every moved consumer's final
   allocations) when allocations move; otherwise ``PUT .../inventories``
   per provider whose inventory changes;
5. ``DELETE`` of the providers that leave the tree (emptied by step 4).

Generations: a provider's generation is the one read in the check phase,
then the one each response returns; the reshaper is the last generation
checked write, so no read is needed in between. Every request is
idempotent or guarded by a generation, so a run killed between any two of
them is completed by running again (the next check plans what is left).

Each traits or aggregates PUT is checked against its answer (the set
Placement now holds), so the read-back after the batch need not read them;
:meth:`RestPlanWriter.write` returns the generations the writes answered,
which the read-back's listing must show
(:func:`~nova_reshape.compute.readback.as_listed`).

Writes for a node: 1 call in-process; over the API ``creates +
trait/aggregate changes + 1`` (plus deletes). The run writes no empty plan:
an unchanged node costs no write.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from sqlalchemy.engine import Connection

from nova_reshape import exception
from nova_reshape.compute.plan import NodePlan
from nova_reshape.compute.tree_source import NodeState, node_state
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.report import (
    AGGREGATE_GENERATION_VERSION,
    ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION,
    POST_RPS_RETURNS_PAYLOAD_API_VERSION,
    RESHAPER_VERSION,
    error_of,
)
from nova_reshape.transport.base import Transport, TreeWriter
from placement_wsgi import errors as placement_errors
from placement_wsgi.objects.allocation import ConsumerAllocations
from placement_wsgi.objects.inventory_record import Inventory
from placement_wsgi.objects.resource_provider import NewProvider
from placement_wsgi.objects.tree_change import TreeChange, TreeCheck
from placement_wsgi.objects.tree_state import TreeState

CUSTOM_PREFIX = "CUSTOM_"
#: Associations whose PUT answers the provider's whole new set (checked against what was sent).
ANSWERED = ("traits", "aggregates")
#: Keys of a consumer's allocations body the reshaper needs besides ``allocations``.
CONSUMER_KEYS = ("consumer_generation", "project_id", "user_id")


class WrittenGenerations(NamedTuple):
    """What a node's writes over the API leave: provider uuid -> its generation as
    the last write to it answered (as read when not written), and provider uuid ->
    the generation the reshaper was sent (it answers none)."""

    answered: dict[str, int]
    reshaped: dict[str, int]


def generations_of(plan: NodePlan, tree: ProviderTree) -> dict[str, int]:
    """provider uuid -> generation as read, for every provider of the plan's node."""
    return {rp: tree.data(rp).generation for rp in tree.get_provider_uuids(plan.nodename)}


def write_in_transaction(writer: TreeWriter, plan: NodePlan, tree: ProviderTree,
                         allocations: Mapping[str, Any],
                         check: Callable[[NodeState], None],
                         record: Callable[[Connection, TreeState], None] | None = None,
                         ) -> None:
    """Write ``plan`` (made from ``tree`` and ``allocations`` as read) in one call,
    one database transaction, in-process on the database.

    ``check`` is given the node as the write leaves it, inside the write's
    transaction, before commit: what it raises rolls the write back and
    reaches the caller. ``record`` then gets the transaction's connection and the
    node as written (the journal's entry, committed with the change). Raises what
    :func:`apply_change` raises.
    """
    apply_change(writer, tree_change(plan, generations_of(plan, tree), allocations),
                 plan.reshape, TreeCheck(plan.root, lambda state: check(node_state(state)),
                                         record))


class RestPlanWriter:
    """Writes node plans through ``placement`` as the sequence of API requests.

    ``known``: names of custom traits and resource classes confirmed to
    exist, shared by every node of the run (nothing in the run deletes one).
    """

    def __init__(self, placement: Transport, known: set[str] | None = None) -> None:
        self.placement = placement
        self.known = known if known is not None else set()

    def write(self, plan: NodePlan, tree: ProviderTree,
              allocations: Mapping[str, Any]) -> WrittenGenerations:
        """Write ``plan``, made from ``tree`` and ``allocations`` as read; the
        generations the writes leave (what the read-back's listing must show).

        Raises :class:`~nova_reshape.exception.PlacementReshapeConflict` or
        :class:`~nova_reshape.exception.ResourceProviderUpdateConflict` when
        Placement changed since the read (a generation conflict, or a provider
        to create whose name or uuid is now taken: the tree is read again),
        another Nova exception for any other refusal.
        """
        generations = generations_of(plan, tree)
        reshaped: dict[str, int] = {}
        self._ensure_custom(
            "/traits/{}", "1.6",
            (trait for traits in plan.traits.values() for trait in traits))
        self._ensure_custom(
            "/resource_classes/{}", "1.7",
            (rc for inventory in plan.final_inventories.values() for rc in inventory))
        for provider in plan.create:
            generations[provider.uuid] = self._create(provider.uuid, provider.name,
                                                      provider.parent_uuid)
        for rp, traits in sorted(plan.traits.items()):
            generations[rp] = self._put(rp, "traits", "1.6", {"traits": traits},
                                        generations[rp])
        for rp, aggregates in sorted(plan.aggregates.items()):
            generations[rp] = self._put(rp, "aggregates", AGGREGATE_GENERATION_VERSION,
                                        {"aggregates": aggregates}, generations[rp])
        if plan.reshape:
            reshaped = self._reshape(plan, generations, allocations)
        else:
            for rp, inventory in sorted(plan.inventories.items()):
                generations[rp] = self._put(
                    rp, "inventories", ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION,
                    {"inventories": inventory}, generations[rp])
        for rp in plan.delete:
            response = self.placement.delete(f"/resource_providers/{rp}")
            if not response and response.status_code != 404:
                raise exception.ResourceProviderDeletionFailed(uuid=rp)
            generations.pop(rp, None)
            reshaped.pop(rp, None)
        return WrittenGenerations(generations, reshaped)

    def _ensure_custom(self, url: str, version: str, names: Iterable[str]) -> None:
        for name in sorted({n for n in names if n.startswith(CUSTOM_PREFIX)} - self.known):
            response = self.placement.put(url.format(name), microversion=version)
            if response.status_code not in (201, 204):
                raise exception.ResourceProviderUpdateFailed(url=url.format(name),
                                                             error=response.text)
            self.known.add(name)

    def _create(self, uuid: str, name: str, parent: str | None) -> int:
        payload: dict[str, Any] = {"uuid": uuid, "name": name}
        if parent is not None:
            payload["parent_provider_uuid"] = parent
        response = self.placement.post("/resource_providers", json=payload,
                                       microversion=POST_RPS_RETURNS_PAYLOAD_API_VERSION)
        if response.status_code == 409:  # taken since the check: read again, plan again
            raise exception.ResourceProviderUpdateConflict(
                uuid=uuid, generation=0, error=response.text)
        if not response:
            raise exception.ResourceProviderCreationFailed(name=name)
        return response.json()["generation"]

    def _put(self, rp: str, what: str, version: str, payload: dict[str, Any],
             generation: int) -> int:
        """PUT one of the provider's associations; the new generation."""
        url = f"/resource_providers/{rp}/{what}"
        response = self.placement.put(
            url, json=payload | {"resource_provider_generation": generation},
            microversion=version)
        if response.status_code == 409:
            if error_of(response).get("code") == "placement.inventory.inuse":
                raise exception.InventoryInUse(error_of(response).get("detail", response.text))
            raise exception.ResourceProviderUpdateConflict(
                uuid=rp, generation=generation, error=response.text)
        if response.status_code != 200:
            raise exception.ResourceProviderUpdateFailed(url=url, error=response.text)
        body = response.json()
        if what in ANSWERED and sorted(body.get(what, ())) != sorted(payload[what]):
            # The read-back takes traits and aggregates as written: check the answer.
            raise exception.ResourceProviderUpdateFailed(
                url=url, error=f"answered {what} {sorted(body.get(what, ()))}, sent "
                               f"{sorted(payload[what])}")
        return body["resource_provider_generation"]

    def _reshape(self, plan: NodePlan, generations: Mapping[str, int],
                 allocations: Mapping[str, Any]) -> dict[str, int]:
        """The reshaper's request; provider uuid -> the generation sent for it."""
        payload = reshaper_request(plan, allocations)
        for rp, entry in payload["inventories"].items():
            entry["resource_provider_generation"] = generations[rp]
        response = self.placement.post("/reshaper", json=payload,
                                       microversion=RESHAPER_VERSION)
        if not response:
            if (response.status_code == 409
                    and error_of(response).get("code") == "placement.concurrent_update"):
                raise exception.PlacementReshapeConflict(error=response.text)
            raise exception.ReshapeFailed(error=response.text)
        return {rp: generations[rp] for rp in payload["inventories"]}


def apply_change(writer: TreeWriter, change: TreeChange, reshape: bool,
                 check: TreeCheck | None = None) -> None:
    """The one in-process call, Placement's errors raised as the Nova exceptions
    the request sequence raises (a stale generation is a reshape conflict, so the
    run re-reads and re-plans the node)."""
    try:
        writer.apply_tree_change(change, check)
    except placement_errors.ConcurrentUpdate as error:
        raise exception.PlacementReshapeConflict(error=str(error)) from error
    except placement_errors.InventoryInUse as error:
        raise exception.InventoryInUse(str(error)) from error
    except placement_errors.PlacementError as error:
        if reshape:
            raise exception.ReshapeFailed(error=str(error)) from error
        raise exception.ResourceProviderUpdateFailed(
            url="(in-process tree change)", error=str(error)) from error


def consumer_bodies(plan: NodePlan, allocations: Mapping[str, Any]) -> dict[str, Any]:
    """Each moved consumer's reshaper entry: owner and generation are the plan's,
    else the ones read. The entries share the plan's allocation dicts."""
    bodies = {}
    for consumer, body in sorted(plan.allocations.items()):
        before = allocations.get(consumer, {})
        bodies[consumer] = {key: body.get(key, before.get(key)) for key in CONSUMER_KEYS
                            } | {"allocations": body.get("allocations", {})}
    return bodies


def reshaper_request(plan: NodePlan, allocations: Mapping[str, Any]) -> dict[str, Any]:
    """The plan's ``POST /reshaper`` body, providers' generations still to fill in.

    A deep copy: the plan stays what the read-back is compared with, whatever
    a transport does with the body.
    """
    payload = plan.reshaper_payload()
    assert payload is not None
    payload["allocations"] = consumer_bodies(plan, allocations)
    return copy.deepcopy(payload)


def _records(inventory: Mapping[str, Any]) -> list[Inventory]:
    return [Inventory.from_body(rc, record) for rc, record in inventory.items()]


def tree_change(plan: NodePlan, generations: Mapping[str, int],
                allocations: Mapping[str, Any]) -> TreeChange:
    """The plan as one :class:`TreeChange`, with the generations and consumers
    read: what the REST sequence writes, in one piece."""
    change = TreeChange(
        create=[NewProvider(p.name, p.uuid, p.parent_uuid) for p in plan.create],
        traits=dict(sorted(plan.traits.items())),
        aggregates=dict(sorted(plan.aggregates.items())),
        delete=list(plan.delete), reshape=plan.reshape)
    if plan.reshape:
        # Built afresh from the plan (records and dicts copied), so no deep copy.
        payload = plan.reshaper_payload()
        assert payload is not None
        change.inventories = {rp: _records(entry["inventories"])
                              for rp, entry in payload["inventories"].items()}
        change.allocations = [
            ConsumerAllocations(
                consumer_uuid=consumer, project_id=body.get("project_id") or "",
                user_id=body.get("user_id") or "",
                allocations={rp: dict(entry["resources"])
                             for rp, entry in body["allocations"].items()},
                consumer_generation=body.get("consumer_generation"))
            for consumer, body in consumer_bodies(plan, allocations).items()]
    else:
        change.inventories = {rp: _records(inventory)
                              for rp, inventory in sorted(plan.inventories.items())}
    change.generations = {rp: generations[rp] for rp in change.existing}
    return change

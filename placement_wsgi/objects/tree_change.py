"""One provider tree's whole change, written in one transaction.

The offline migration plans each compute node's change in memory and then
has to write it. Through the API that is a sequence of requests (custom
traits and classes, each new child provider, the traits and aggregates of
each changed provider, one ``POST /reshaper``, the deletes): each its own
transaction, so a run killed in between leaves the tree half-written
(empty children, say) until the next run completes it. In-process on the
database, :func:`apply_tree_change` writes the same change in ONE
transaction by composing the very object functions those requests run,
with their checks and errors:

1. the generations the caller read of every existing provider it touches
   are checked (``errors.ConcurrentUpdate``, as the API reports a stale
   generation; an unknown provider is ``errors.NotFound``);
2. the custom traits and resource classes the change uses are created if
   missing (as ``PUT /traits/{name}`` and ``PUT /resource_classes/{name}``);
3. new providers are inserted, parents first
   (:func:`~placement_wsgi.objects.resource_provider.insert_providers`:
   parent, name and uuid clash checks);
4. traits (:func:`~placement_wsgi.objects.trait.replace_traits_of_providers`,
   every provider's at once) and aggregates
   (:func:`~placement_wsgi.objects.aggregate.replace_provider_aggregates`,
   with the generation bump of a 1.19+ PUT) per provider;
5. the inventories: with allocations to move, the reshaper's three steps
   (:func:`~placement_wsgi.objects.reshaper.replace_inventories_and_allocations`);
   otherwise each provider's inventory as ``PUT .../inventories`` replaces it;
6. the providers leaving the tree are deleted
   (:func:`~placement_wsgi.objects.resource_provider.delete_providers`: each as
   ``DELETE /resource_providers/{uuid}``, all in a few statements);
7. with a :class:`TreeCheck`, the tree is read as it now stands, inside the
   same transaction (a root the change deleted: a tree without providers),
   and handed to the caller's check: whatever the check raises rolls the
   change back, so a write the caller finds wrong is never committed; its
   ``record`` then writes the caller's own rows on the same connection, so
   they commit with the change or not at all (the offline
   tools' journal, :mod:`nova_reshape.journal`).

Any error rolls the whole transaction back: the database is as before.
Deadlocks and transient errors rerun it (:meth:`Database.write`).

:func:`read_with_changes` is the preview of many such changes: they are
applied in one transaction with the same steps (1-6), the caller reads the
database as they leave it over that transaction's connection, and the
transaction is rolled back whatever happens: what the caller read is
exactly what a commit of the same changes would have left, and nothing is
written.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db.database import Database, TransactionRetriesExhausted
from placement_wsgi.objects import aggregate as aggregate_obj
from placement_wsgi.objects import inventory as inventory_obj
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.objects import resource_provider as rp_obj
from placement_wsgi.objects import trait as trait_obj
from placement_wsgi.objects.allocation import ConsumerAllocations
from placement_wsgi.objects.inventory_record import (
    Inventory,
    ProviderInventories,
    check_capacity,
)
from placement_wsgi.objects.provider_lookup import (
    GENERATION_CONFLICT,
    bump_generation,
    get_provider,
)
from placement_wsgi.objects.reshaper import (
    provider_generations,
    replace_inventories_and_allocations,
)
from placement_wsgi.objects.tree_state import TreeState, read_batch

LOG = logging.getLogger(__name__)

#: The capacity rule of inventories written without a reshape: ``PUT
#: .../inventories`` from 1.26 on (``reserved == total`` allowed).
CAPACITY_RULES_VERSION = (1, 26)


class TreeCheck(NamedTuple):
    """The caller's check of a tree as the change leaves it, before commit.

    ``inspect`` gets the :class:`TreeState` of ``root`` read inside the
    change's transaction (what :func:`~placement_wsgi.objects.tree_state.read_trees`
    would return once committed); anything it raises rolls the change back
    and reaches the caller unchanged. ``record``, when given, is then called
    with the transaction's connection and the same state: what it writes
    commits with the change (and is rolled back with it).
    """

    root: str
    inspect: Callable[[TreeState], None]
    record: Callable[[Connection, TreeState], None] | None = None


@dataclasses.dataclass
class TreeChange:
    """Everything one tree's write consists of; every value is the final one.

    * ``generations``: provider uuid -> generation the caller read, for every
      existing provider the change touches (traits, aggregates, inventories,
      delete); new providers need none;
    * ``create``: providers to create (name, canonical uuid, parent uuid),
      parents before their children;
    * ``traits`` / ``aggregates``: provider uuid -> its complete final set;
    * ``inventories``: provider uuid -> its complete final inventory
      (records as a ``PUT .../inventories`` body gives them), in write order;
    * ``reshape``: inventories and ``allocations`` are written together by the
      reshaper's steps (``allocations``: each moved consumer's complete final
      allocations, with the consumer generation read); without it
      ``allocations`` must be empty and each inventory is replaced as
      ``PUT .../inventories`` would;
    * ``delete``: providers to delete, in order (children first; emptied by
      the inventory write).
    """

    generations: dict[str, int] = dataclasses.field(default_factory=dict)
    create: list[rp_obj.NewProvider] = dataclasses.field(default_factory=list)
    traits: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    aggregates: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    inventories: dict[str, list[Inventory]] = dataclasses.field(default_factory=dict)
    reshape: bool = False
    allocations: list[ConsumerAllocations] = dataclasses.field(default_factory=list)
    delete: list[str] = dataclasses.field(default_factory=list)

    @property
    def existing(self) -> list[str]:
        """The existing providers the change touches (sorted uuids)."""
        new = {provider.uuid for provider in self.create}
        touched = (set(self.traits) | set(self.aggregates) | set(self.inventories)
                   | set(self.delete))
        return sorted(touched - new)

    def custom_names(self) -> tuple[list[str], list[str]]:
        """The custom traits and custom resource classes the change uses (sorted)."""
        traits = {name for names in self.traits.values() for name in names}
        classes = {record.resource_class for records in self.inventories.values()
                   for record in records}
        classes |= {name for consumer in self.allocations
                    for resources in consumer.allocations.values() for name in resources}
        return ([name for name in sorted(traits) if name.startswith(trait_obj.CUSTOM_PREFIX)],
                [name for name in sorted(classes) if name.startswith(trait_obj.CUSTOM_PREFIX)])

    def check(self) -> None:
        """ValueError naming what makes the change inconsistent (a caller's bug)."""
        missing = [uuid for uuid in self.existing if uuid not in self.generations]
        if missing:
            raise ValueError(f"no generation given for existing providers {missing}")
        if self.allocations and not self.reshape:
            raise ValueError("allocations are only written by a reshape")


def _check_generations(connection: Connection, change: TreeChange) -> dict[str, tuple[int, int]]:
    """uuid -> (id, generation) of the existing providers, each at the generation read."""
    found = provider_generations(connection, change.existing)
    for uuid in change.existing:
        if uuid not in found:
            raise errors.NotFound(f"No resource provider with uuid {uuid} found")
        if found[uuid][1] != change.generations[uuid]:
            raise errors.ConcurrentUpdate(GENERATION_CONFLICT)
    return found


def _ensure_custom_names(connection: Connection, change: TreeChange) -> None:
    """Create the change's custom traits and classes that do not exist yet."""
    ensure_custom_names(connection, *change.custom_names())


def ensure_custom_names(connection: Connection, traits: Sequence[str],
                        classes: Sequence[str]) -> None:
    """Create the custom ``traits`` and resource ``classes`` that do not exist yet, as
    ``PUT /traits/{name}`` and ``PUT /resource_classes/{name}`` do (one lookup per
    kind; an insert only for the missing ones); ``errors.BadRequest`` for an invalid
    name, nothing created."""
    for kind, names, known, insert in (
            ("trait", traits, trait_obj.trait_ids_by_name,
             trait_obj.insert_trait_unless_present),
            ("resource class", classes, rc_obj.ids_by_name,
             rc_obj.insert_class_unless_present)):
        for name in names:
            # Traits and classes share the rule for custom names.
            if not trait_obj.is_valid_custom_name(name):
                raise errors.BadRequest(f"Invalid custom {kind} name: {name}")
        found = known(connection, names)
        for name in names:
            if name not in found:
                insert(connection, name)


def _write_inventories(connection: Connection, change: TreeChange,
                       ids: dict[str, int], generations: dict[str, int],
                       allocation_options: dict) -> None:
    targets = [ProviderInventories(generations[uuid], list(records), uuid)
               for uuid, records in change.inventories.items()]
    if change.reshape:
        # Checked and tracked here: the reshaper need not look them up again.
        replace_inventories_and_allocations(
            connection, targets, change.allocations, allocation_options,
            known={uuid: (ids[uuid], generations[uuid]) for uuid in change.inventories})
        return
    for target in targets:
        check_capacity(target.inventories, target.provider_uuid, CAPACITY_RULES_VERSION)
    inventory_obj.replace_many(connection, targets, ids, rewrite_unchanged=True)


def _write(connection: Connection, change: TreeChange, allocation_options: dict,
           ) -> list[str]:
    """Steps 1-6 of the module docstring; the providers written and kept (sorted)."""
    found = _check_generations(connection, change)
    ids = {uuid: provider_id for uuid, (provider_id, _) in found.items()}
    generations = {uuid: generation for uuid, (_, generation) in found.items()}
    _ensure_custom_names(connection, change)
    ids.update(rp_obj.insert_providers(connection, change.create))
    generations.update((new.uuid, 0) for new in change.create)
    after = trait_obj.replace_traits_of_providers(
        connection, {ids[uuid]: (generations[uuid], names)
                     for uuid, names in change.traits.items()})
    generations.update((uuid, after[ids[uuid]]) for uuid in change.traits)
    for uuid, aggregates in change.aggregates.items():
        # As PUT .../aggregates with a generation (1.19+): bump, then replace.
        generations[uuid] = bump_generation(connection, ids[uuid], generations[uuid])
        aggregate_obj.replace_provider_aggregates(connection, get_provider(connection, uuid),
                                                  aggregates)
    _write_inventories(connection, change, ids, generations, allocation_options)
    rp_obj.delete_providers(connection, change.delete)
    return sorted(set(ids) - set(change.delete))


def _checked(connection: Connection, after: dict[str, tuple[int, int]],
             checks: Sequence[TreeCheck], deleted: set[str]) -> None:
    """Step 7 for every check: their trees read together (one bulk read), each
    inspected then recorded, in the order given. A root the changes deleted is
    a tree without providers (what a revert of a run that created the node
    expects)."""
    if not checks:
        return
    roots = [check.root for check in checks if check.root not in deleted]
    known = {uuid: after[uuid] for uuid in roots if uuid in after}
    known.update(provider_generations(connection, [uuid for uuid in roots
                                                   if uuid not in known]))
    for uuid in roots:
        if uuid not in known:
            raise errors.NotFound(f"No resource provider with uuid {uuid} found")
    states = {state.root: state for state in read_batch(
        connection, list(dict.fromkeys(known[uuid][0] for uuid in roots)))}
    for check in checks:
        state = (TreeState(check.root, [], [], {}, {}, {}, {}, {}) if check.root in deleted
                 else states[check.root])
        check.inspect(state)
        if check.record is not None:
            check.record(connection, state)


def _apply(connection: Connection, changes: Sequence[TreeChange],
           allocation_options: dict, checks: Sequence[TreeCheck]) -> dict[str, int]:
    kept = [uuid for change in changes for uuid in _write(connection, change,
                                                          allocation_options)]
    after = provider_generations(connection, kept)
    _checked(connection, after, checks,
             {uuid for change in changes for uuid in change.delete})
    return {uuid: generation for uuid, (_, generation) in after.items()}


#: Trees a caller writes in one transaction when it can (:func:`applied_together`):
#: about 4 statements per node instead of 44 one by one; 5 gave 8 per node and
#: 2 CPU-ms more, 20 no less CPU (the migration, PostgreSQL, 300 nodes).
GROUP_SIZE = 10
#: A batch is written in at least this many transactions (see :func:`group_size`).
TRANSACTIONS_PER_BATCH = 20


def group_size(batch: int, largest: int = GROUP_SIZE) -> int:
    """Trees per transaction in a batch of ``batch`` trees: ``largest``, but a batch
    in at least :data:`TRANSACTIONS_PER_BATCH` transactions, so that a small run
    (or a worker's small share) still commits as it goes, not all at its end (a
    cut run then has the more done)."""
    return max(1, min(largest, batch // TRANSACTIONS_PER_BATCH))


def applied_together(apply: Callable[[Sequence[TreeChange], Sequence[TreeCheck]], object],
                     changes: Sequence[TreeChange], checks: Sequence[TreeCheck]) -> bool:
    """Whether ``apply(changes, checks)`` (an :func:`apply_tree_changes`) wrote them
    all in ONE transaction. False when nothing was written: they are not
    :func:`disjoint`, or anything failed (a conflict, a check's refusal, any
    error; rolled back). A caller then writes them one by one, which tells which
    tree failed and why: the one way every caller writes trees in groups."""
    if not disjoint(changes):
        return False
    try:
        apply(changes, checks)
    except Exception:  # noqa: BLE001 - rolled back; written one by one, which says why
        LOG.debug("writing %d trees together failed; writing them one by one",
                  len(changes), exc_info=True)
        return False
    return True


def disjoint(changes: Sequence[TreeChange]) -> bool:
    """Whether no provider and no consumer is part of more than one of ``changes``
    (what :func:`merged` needs)."""
    providers: set[str] = set()
    consumers: set[str] = set()
    for change in changes:
        mine = (set(change.generations) | {new.uuid for new in change.create}
                | {new.parent_uuid for new in change.create if new.parent_uuid}
                | set(change.traits) | set(change.aggregates) | set(change.inventories)
                | set(change.delete))
        theirs = {consumer.consumer_uuid for consumer in change.allocations}
        if mine & providers or theirs & consumers:
            return False
        providers |= mine
        consumers |= theirs
    return True


def merged(changes: Sequence[TreeChange]) -> list[TreeChange]:
    """``changes`` (:func:`disjoint` ones) as at most two changes, the reshapes
    and the others, that write exactly what they write one by one: each step
    then runs once for all of them, set-based (a few statements for many trees).
    """
    if not disjoint(changes):
        raise ValueError("changes merged must not share providers or consumers")
    together = []
    for reshape in (True, False):
        part = [change for change in changes if change.reshape == reshape]
        if not part:
            continue
        one = TreeChange(reshape=reshape)
        for change in part:
            one.generations.update(change.generations)
            one.create += change.create
            one.traits.update(change.traits)
            one.aggregates.update(change.aggregates)
            one.inventories.update(change.inventories)
            one.allocations += change.allocations
            one.delete += change.delete
        together.append(one)
    return together


def apply_tree_change(database: Database, change: TreeChange, *,
                      set_consumer_type: bool = False,
                      incomplete_project: str, incomplete_user: str,
                      check: TreeCheck | None = None) -> dict[str, int]:
    """Write ``change`` in one transaction (see the module docstring).

    Returns provider uuid -> generation afterwards, for every provider the
    change created or touched and did not delete. Raises the API's errors
    (``errors.ConcurrentUpdate`` for a stale generation, ``BadRequest``,
    ``Conflict``, ``InventoryInUse``, ``NotFound``), the database untouched;
    ValueError for an inconsistent change. The keywords are the reshaper's
    (:func:`~placement_wsgi.objects.allocation.prepare_allocations`);
    ``check`` inspects the tree before commit (see :class:`TreeCheck`).
    """
    return apply_tree_changes(database, [change], set_consumer_type=set_consumer_type,
                              incomplete_project=incomplete_project,
                              incomplete_user=incomplete_user,
                              checks=[check] if check is not None else [])


def apply_tree_changes(database: Database, changes: Sequence[TreeChange], *,
                       set_consumer_type: bool = False,
                       incomplete_project: str, incomplete_user: str,
                       checks: Sequence[TreeCheck] = ()) -> dict[str, int]:
    """Write several trees' changes in ONE transaction, as :func:`apply_tree_change`
    writes one, each step once for all of them (:func:`merged`: they must be
    :func:`disjoint`, else ValueError); then each of ``checks`` inspects its tree
    (all read in one bulk read) and records, in the order given, before commit.

    All or nothing: any change's error, or any check's, rolls every change
    back. What a caller gains is the statements (and the commit) shared; a
    caller that must know which change failed writes them one by one after a
    failure.
    """
    for change in changes:
        change.check()
    options = {"set_consumer_type": set_consumer_type,
               "incomplete_project": incomplete_project,
               "incomplete_user": incomplete_user}
    together = merged(changes) if len(changes) > 1 else list(changes)
    try:
        return database.write(_apply, together, options, checks)
    except TransactionRetriesExhausted as error:
        raise errors.ConcurrentUpdate(
            "another process kept changing the same resource providers during the "
            "tree change; try again.") from error


T = TypeVar("T")


class _RolledBack(Exception):
    """Carries the preview's answer out of its transaction, which it rolls back."""

    def __init__(self, answer: object) -> None:
        super().__init__("preview rolled back")
        self.answer = answer


def read_with_changes(database: Database, changes: Sequence[TreeChange],
                      read: Callable[[Connection], T], *, incomplete_project: str,
                      incomplete_user: str) -> T:
    """``read(connection)`` on the database as ``changes`` would leave it; nothing written.

    Every change is applied as :func:`apply_tree_change` applies it (same
    checks, same errors: a stale generation is ``errors.ConcurrentUpdate``),
    all in ONE write transaction; ``read`` then runs over that transaction's
    connection and the transaction is rolled back, also when ``read``
    returns. No change at all reads the database as it is, the same way.
    """
    options = {"set_consumer_type": False, "incomplete_project": incomplete_project,
               "incomplete_user": incomplete_user}
    for change in changes:
        change.check()

    def body(connection: Connection) -> None:
        _apply(connection, changes, options, ())
        raise _RolledBack(read(connection))

    try:
        database.write(body)
    except _RolledBack as done:
        return done.answer  # type: ignore[return-value]
    except TransactionRetriesExhausted as error:
        raise errors.ConcurrentUpdate(
            "another process kept changing the same resource providers during the "
            "preview; try again.") from error
    raise AssertionError("the preview's transaction was committed")  # pragma: no cover

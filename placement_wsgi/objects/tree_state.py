"""Bulk reads of provider trees and their consumers' allocations (read-only).

The offline migration needs, for every compute node, what a report client
learns through the API: the node's provider tree (providers, inventories,
traits, aggregates, and the sharing providers associated with it) and the
allocations of every consumer that holds something in the tree. Per node
through the API that is dozens of requests. :func:`read_trees` reads the
same state for a batch of trees in a few set-based statements and yields it
tree by tree, so memory is bounded by the batch, not the deployment.

Each batch is read in one read transaction (one consistent view); two
batches may see different moments, which is fine for a run whose writer is
the only one. The values have the API's shapes (see :class:`TreeState`),
built by the same object functions the handlers use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import os_traits
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
from placement_wsgi.db.database import Database
from placement_wsgi.objects.aggregate import aggregate_uuids_by_provider
from placement_wsgi.objects.allocation import consumer_views
from placement_wsgi.objects.inventory import inventories_by_provider
from placement_wsgi.objects.provider_lookup import provider_from_row, provider_select
from placement_wsgi.objects.trait import trait_names_by_provider

#: Trees read per transaction by default.
DEFAULT_BATCH_SIZE = 200

_providers = tables.resource_providers
_allocations = tables.allocations
_rp_aggregates = tables.resource_provider_aggregates
_rp_traits = tables.resource_provider_traits


@dataclasses.dataclass
class TreeState:
    """One root provider's tree and its consumers, in the API's shapes.

    * ``providers``: the tree's providers as ``GET /resource_providers`` lists
      them at 1.14 (``uuid``, ``name``, ``generation``,
      ``parent_provider_uuid``, ``root_provider_uuid``), root first, then by
      creation (id) order;
    * ``sharing``: the providers with ``MISC_SHARES_VIA_AGGREGATE`` in an
      aggregate of a tree provider, same shape (they may belong to other
      trees), ordered by uuid; ``sharing_of`` says which tree provider each is
      associated with (tree provider uuid -> sharing uuids);
    * ``inventories``: provider uuid -> ``{resource class: record}`` as
      ``GET /resource_providers/{uuid}/inventories`` shows it;
    * ``traits`` / ``aggregates``: provider uuid -> sorted names / uuids;
      these three cover the tree's and the sharing providers;
    * ``allocations``: consumer uuid -> ``GET /allocations/{consumer}`` body
      at 1.28 (``allocations`` with every provider the consumer uses,
      ``project_id``, ``user_id``, ``consumer_generation``) for every
      consumer holding an allocation on a provider of the tree, by consumer uuid.
    """

    root: str
    providers: list[dict[str, Any]]
    sharing: list[dict[str, Any]]
    sharing_of: dict[str, list[str]]
    inventories: dict[str, dict[str, dict[str, Any]]]
    traits: dict[str, list[str]]
    aggregates: dict[str, list[str]]
    allocations: dict[str, dict[str, Any]]


def _listed(row: sa.Row) -> dict[str, Any]:
    provider = provider_from_row(row)
    return {"uuid": provider.uuid, "name": provider.name, "generation": provider.generation,
            "parent_provider_uuid": provider.parent_provider_uuid,
            "root_provider_uuid": provider.root_provider_uuid}


def _root_batches(connection_of: Database, roots: Sequence[str] | None,
                  batch_size: int) -> Iterator[list[int]]:
    """Ids of root providers, ``batch_size`` at a time (the given uuids' order, or id order)."""
    is_root = _providers.c.parent_provider_id.is_(None)
    if roots is not None:
        for start in range(0, len(roots), batch_size):
            chunk = list(roots[start:start + batch_size])
            found = dict(connection_of.read(lambda connection, chunk=chunk: list(
                connection.execute(sa.select(_providers.c.uuid, _providers.c.id)
                                   .where(one_of(connection, _providers.c.uuid, chunk),
                                          is_root)))))
            ids = [found[uuid] for uuid in chunk if uuid in found]
            if ids:
                yield ids
        return
    last = 0
    while True:
        ids = connection_of.read(lambda connection, after=last: list(connection.execute(
            sa.select(_providers.c.id).where(is_root, _providers.c.id > after)
            .order_by(_providers.c.id).limit(batch_size)).scalars()))
        if not ids:
            return
        yield ids
        last = ids[-1]


def _sharing_links(connection: Connection, tree_ids: sa.Select) -> list[tuple[int, int]]:
    """(tree provider, sharing provider) pairs: a sharing provider in one of its aggregates."""
    mine, theirs = _rp_aggregates.alias("mine"), _rp_aggregates.alias("theirs")
    sharing_trait = (sa.select(_rp_traits.c.resource_provider_id)
                     .join(tables.traits, tables.traits.c.id == _rp_traits.c.trait_id)
                     .where(tables.traits.c.name == os_traits.MISC_SHARES_VIA_AGGREGATE))
    # Plain tuples: SQLAlchemy's Row objects are not meant to be compared (sorted).
    return sorted(tuple(row) for row in connection.execute(
        sa.select(mine.c.resource_provider_id, theirs.c.resource_provider_id)
        .join(theirs, theirs.c.aggregate_id == mine.c.aggregate_id)
        .where(mine.c.resource_provider_id.in_(tree_ids),
               theirs.c.resource_provider_id.in_(sharing_trait))
        .distinct()).all())


def read_batch(connection: Connection, root_ids: list[int]) -> list[TreeState]:
    """The states of the trees rooted at ``root_ids`` (in that order), in seven statements."""
    in_trees = sa.or_(one_of(connection, _providers.c.root_provider_id, root_ids),
                      one_of(connection, _providers.c.id, root_ids))
    tree_ids = sa.select(_providers.c.id).where(in_trees)
    members = list(connection.execute(provider_select().where(in_trees)
                                      .order_by(_providers.c.id)).all())
    links = _sharing_links(connection, tree_ids)
    listed = {row.id: _listed(row) for row in members}
    outside = sorted({sharing for _, sharing in links} - listed.keys())
    if outside:
        listed.update((row.id, _listed(row)) for row in connection.execute(
            provider_select().where(one_of(connection, _providers.c.id, outside))).all())
    everyone = sa.select(_providers.c.id).where(
        sa.or_(in_trees, one_of(connection, _providers.c.id, outside)))
    inventories = inventories_by_provider(connection, everyone)
    traits = trait_names_by_provider(connection, everyone)
    aggregates = aggregate_uuids_by_provider(connection, everyone)
    views = consumer_views(connection, sa.select(_allocations.c.consumer_id).where(
        _allocations.c.resource_provider_id.in_(tree_ids)).distinct())

    states = {listed[root]["uuid"]: TreeState(listed[root]["uuid"], [], [], {}, {}, {}, {}, {})
              for root in root_ids}
    ids_of: dict[str, list[int]] = {uuid: [] for uuid in states}
    for row in members:
        entry = listed[row.id]
        states[entry["root_provider_uuid"]].providers.append(entry)
        ids_of[entry["root_provider_uuid"]].append(row.id)
    for tree_provider, sharing in links:
        root = listed[tree_provider]["root_provider_uuid"]
        state, entry = states[root], listed[sharing]
        state.sharing_of.setdefault(listed[tree_provider]["uuid"], []).append(entry["uuid"])
        if entry["root_provider_uuid"] != root and sharing not in ids_of[root]:
            ids_of[root].append(sharing)
    consumers_of: dict[str, list[str]] = {}
    for consumer in sorted(views):
        for rp_uuid in views[consumer].allocations:
            consumers_of.setdefault(rp_uuid, []).append(consumer)
    for root, state in states.items():
        tree_size = len(state.providers)
        state.sharing = sorted((listed[sharing] for sharing in ids_of[root][tree_size:]),
                               key=lambda entry: entry["uuid"])
        for provider in ids_of[root]:
            uuid = listed[provider]["uuid"]
            state.inventories[uuid] = {record.resource_class: record.as_dict()
                                       for record in inventories.get(provider, [])}
            state.traits[uuid] = traits.get(provider, [])
            state.aggregates[uuid] = aggregates.get(provider, [])
        for entry in state.providers:
            for consumer in consumers_of.get(entry["uuid"], ()):
                state.allocations[consumer] = consumer_body(views[consumer])
        state.allocations = dict(sorted(state.allocations.items()))
    return list(states.values())


def consumer_body(view: Any) -> dict[str, Any]:
    """A consumer's view as ``GET /allocations/{consumer}`` at 1.28 shows it."""
    return {"allocations": view.allocations, "project_id": view.project_id,
            "user_id": view.user_id, "consumer_generation": view.generation}


def read_trees(database: Database, roots: Sequence[str] | None = None,
               batch_size: int = DEFAULT_BATCH_SIZE) -> Iterator[TreeState]:
    """:class:`TreeState` of each root provider in ``roots`` (uuids), or of every root.

    Trees come in the order of ``roots`` (or by provider id); a uuid that is
    not a root provider yields nothing. ``batch_size`` trees are read per
    transaction, in a fixed number of statements, and only one batch is
    held at a time.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    for root_ids in _root_batches(database, roots, batch_size):
        yield from database.read(read_batch, root_ids)


#: Uuids and names looked up per statement by :func:`listed_providers`.
LOOKUP_CHUNK = 500


def _named_or_with_uuid(connection: Connection, uuids: Sequence[str],
                        names: Sequence[str]) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, max(len(uuids), len(names)), LOOKUP_CHUNK):
        wanted = sa.or_(one_of(connection, _providers.c.uuid, uuids[start:start + LOOKUP_CHUNK]),
                        one_of(connection, _providers.c.name, names[start:start + LOOKUP_CHUNK]))
        found.update((row.uuid, _listed(row))
                     for row in connection.execute(provider_select().where(wanted)).all())
    roots = sorted({provider["root_provider_uuid"] for provider in found.values()} - set(found))
    for start in range(0, len(roots), LOOKUP_CHUNK):
        found.update((row.uuid, _listed(row)) for row in connection.execute(
            provider_select().where(
                one_of(connection, _providers.c.uuid, roots[start:start + LOOKUP_CHUNK]))).all())
    return list(found.values())


def listed_providers(database: Database, uuids: Sequence[str],
                     names: Sequence[str]) -> list[dict[str, Any]]:
    """The providers with one of ``uuids`` or one of ``names``, and the root of each,
    as ``GET /resource_providers`` lists them at 1.14 (see :class:`TreeState`), in
    one read transaction: what a listing of every provider would say of them,
    without reading every provider."""
    return database.read(_named_or_with_uuid, sorted(set(uuids)), sorted(set(names)))


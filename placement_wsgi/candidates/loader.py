"""Database side of the candidate engine: a few set-based queries per request.

:class:`Loader` reads everything the combination step needs in one pass
per table (never one query per provider):

* every inventory of a requested class with its current usage (one grouped
  ``SUM`` over the covering allocations index) and the provider's root/parent;
* the providers carrying any trait the request mentions (plus the sharing
  trait), and the members of every aggregate it names;
* for sharing providers, the roots of everything sharing an aggregate with them;
* on demand, the full (id, parent, root) rows of the trees that matter.

:meth:`Loader.load_summaries` reads what ``provider_summaries`` shows, for
the providers (or whole trees) of the returned candidates only.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.candidates.resolved import ResolvedRequest
from placement_wsgi.candidates.snapshot import InventoryRow, Snapshot
from placement_wsgi.capacity import truncated
from placement_wsgi.db import tables
from placement_wsgi.db.rows import (
    INVENTORY_CAPACITY,
    Statement,
    connection_rows,
    in_ids,
    in_values,
)

_rp = tables.resource_providers
_inv = tables.inventories
_alloc = tables.allocations
_rpt = tables.resource_provider_traits
_rpa = tables.resource_provider_aggregates
_aggs = tables.placement_aggregates
_traits = tables.traits


def _providers(where: sa.ColumnElement) -> sa.Select:
    return sa.select(_rp.c.id, _rp.c.uuid, _rp.c.parent_provider_id,
                     sa.func.coalesce(_rp.c.root_provider_id, _rp.c.id)).where(where)


def _usage(where: sa.ColumnElement) -> sa.Select:
    return (sa.select(_alloc.c.resource_provider_id, _alloc.c.resource_class_id,
                      sa.func.sum(_alloc.c.used))
            .where(where)
            .group_by(_alloc.c.resource_provider_id, _alloc.c.resource_class_id))


# The statements of a request, built and compiled once (see rows.Statement);
# their parameters are id lists.
_HAS_TREES = Statement(lambda: sa.select(_rp.c.id).where(
    _rp.c.parent_provider_id.is_not(None)).limit(1))
_INVENTORIES = Statement(lambda classes: sa.select(
    _inv.c.resource_provider_id, _inv.c.resource_class_id, INVENTORY_CAPACITY,
    _inv.c.min_unit, _inv.c.max_unit, _inv.c.step_size).where(
    in_ids(_inv.c.resource_class_id, classes)))
_USAGE = Statement(lambda classes: _usage(in_ids(_alloc.c.resource_class_id, classes)))
_rp_with = _rp.alias("with_inventory")
#: every provider of the trees where some provider has an inventory of ``classes``
_TREES_WITH_CLASSES = Statement(lambda classes: _providers(_rp.c.root_provider_id.in_(
    sa.select(_rp_with.c.root_provider_id)
    .join(_inv, _inv.c.resource_provider_id == _rp_with.c.id)
    .where(in_ids(_inv.c.resource_class_id, classes)))))
_PROVIDERS = Statement(lambda ids: _providers(in_ids(_rp.c.id, ids)))
#: without trees every provider is its own root: the uuid is all that is missing
_UUIDS = Statement(lambda ids: sa.select(_rp.c.id, _rp.c.uuid).where(in_ids(_rp.c.id, ids)))
_TREES = Statement(lambda roots: _providers(in_ids(_rp.c.root_provider_id, roots)))
_TREES_BUT = Statement(lambda roots, known: _providers(sa.and_(
    in_ids(_rp.c.root_provider_id, roots), sa.not_(in_ids(_rp.c.id, known)))))
_AGGREGATE_MEMBERS = Statement(lambda aggregates: sa.select(
    _rpa.c.aggregate_id, _rpa.c.resource_provider_id).where(
    in_ids(_rpa.c.aggregate_id, aggregates)))
#: id -> uuid of the aggregates named (one expanding parameter: compiled once, cached)
_AGGREGATE_IDS = sa.select(_aggs.c.id, _aggs.c.uuid).where(
    _aggs.c.uuid.in_(sa.bindparam("uuids", expanding=True)))
_TRAIT_HOLDERS = Statement(lambda traits: sa.select(
    _rpt.c.resource_provider_id, _rpt.c.trait_id).where(in_ids(_rpt.c.trait_id, traits)))
# ``classes``: the requested classes, excluded. Naming the other classes instead
# (as _OTHER_INVENTORIES_IN_TREES does) changed PostgreSQL's plan for a few
# providers, and with it the order of a provider's classes in the body.
_OTHER_INVENTORIES = Statement(lambda providers, classes: sa.select(
    _inv.c.resource_provider_id, _inv.c.resource_class_id, INVENTORY_CAPACITY).where(
    in_ids(_inv.c.resource_provider_id, providers),
    sa.not_(in_ids(_inv.c.resource_class_id, classes))))
# the same read for whole trees, by root: a seventh of the ids to send on trees
# of seven providers. ``classes``: the other classes some provider has
# (ResolvedRequest.other_classes), named, so that the database finds the rows
# through the class index: excluding the requested ones made SQLite probe the
# inventories of every provider of the trees (nested bench: 7,000 providers for
# 1,000 rows, 4.5 -> 1.5 ms)
_OTHER_INVENTORIES_IN_TREES = Statement(lambda roots, classes: sa.select(
    _inv.c.resource_provider_id, _inv.c.resource_class_id, INVENTORY_CAPACITY).join(
    _rp, _rp.c.id == _inv.c.resource_provider_id).where(
    in_ids(_rp.c.root_provider_id, roots), in_ids(_inv.c.resource_class_id, classes)))
_OTHER_USAGE = Statement(lambda providers, classes: _usage(sa.and_(
    in_ids(_alloc.c.resource_provider_id, providers),
    in_ids(_alloc.c.resource_class_id, classes))))
# trait ids per provider, names after for the few distinct ids: a name string
# per row (and the join) cost twice as much as the integers
_TRAITS_OF = Statement(lambda providers: sa.select(
    _rpt.c.resource_provider_id, _rpt.c.trait_id).where(
    in_ids(_rpt.c.resource_provider_id, providers)))
_TRAITS_IN_TREES = Statement(lambda roots: sa.select(
    _rpt.c.resource_provider_id, _rpt.c.trait_id)
    .join(_rp, _rp.c.id == _rpt.c.resource_provider_id)
    .where(in_ids(_rp.c.root_provider_id, roots)))
_TRAIT_NAMES = Statement(lambda traits: sa.select(_traits.c.id, _traits.c.name).where(
    in_ids(_traits.c.id, traits)))

class Loader:
    """Reads a :class:`Snapshot` for one resolved request over one connection."""

    def __init__(self, connection: Connection, resolved: ResolvedRequest) -> None:
        self.connection = connection
        self.resolved = resolved

    def load(self) -> Snapshot:
        """Everything but the trees (see :meth:`load_trees`)."""
        snapshot = Snapshot()
        connection = self.connection
        snapshot.has_trees = bool(_HAS_TREES.rows(connection))
        self._load_inventories(snapshot)
        self._load_traits(snapshot)
        self._load_aggregates(snapshot)
        self._load_in_tree(snapshot)
        self._load_sharing(snapshot)
        return snapshot

    def _load_inventories(self, snapshot: Snapshot) -> None:
        """Every inventory of a requested class, its usage, and its provider."""
        classes = self.resolved.requested_classes
        if not classes:
            return
        inventories = snapshot.inventories
        # tuple.__new__ in C: a third cheaper than _make for thousands of rows
        for row in map(functools.partial(tuple.__new__, InventoryRow),
                       _INVENTORIES.rows(self.connection, classes)):
            by_provider = inventories.get(row.resource_class)
            if by_provider is None:
                by_provider = inventories[row.resource_class] = {}
            by_provider[row.provider] = row
        _add_usage(snapshot.usage, _USAGE.rows(self.connection, classes))
        if not snapshot.has_trees:
            providers = {provider for by_provider in inventories.values()
                         for provider in by_provider}
            snapshot.root_of.update(zip(providers, providers, strict=True))
            snapshot.parent_of.update(dict.fromkeys(providers))
            return
        # whole trees at once: one statement instead of the providers with such
        # an inventory now and the rest of their trees later
        members: dict[int, list[int]] = {}
        for provider in self._add_providers(snapshot, _TREES_WITH_CLASSES, classes):
            root = snapshot.root_of[provider]
            found = members.get(root)
            if found is None:
                found = members[root] = []
            found.append(provider)
        for root, found in members.items():
            found.sort()
            snapshot.tree_members[root] = found

    def _add_providers(self, snapshot: Snapshot, statement: Statement,
                       *id_lists: Iterable[int]) -> list[int]:
        """Record uuid, parent and root of the providers ``statement`` reads."""
        rows = statement.rows(self.connection, *id_lists)
        if not rows:
            return []
        # columns by one C-level transposition: no Python loop over thousands of rows
        providers, uuids, parents, roots = zip(*rows, strict=True)
        snapshot.uuid_of.update(zip(providers, uuids, strict=True))
        snapshot.parent_of.update(zip(providers, parents, strict=True))
        snapshot.root_of.update(zip(providers, roots, strict=True))
        return list(providers)

    def _load_traits(self, snapshot: Snapshot) -> None:
        traits = self.resolved.mentioned_traits
        if self.resolved.sharing_trait is not None:
            traits.add(self.resolved.sharing_trait)
        if not traits:
            return
        holders = snapshot.trait_holders
        for provider, trait in _TRAIT_HOLDERS.rows(self.connection, traits):
            found = holders.get(trait)
            if found is None:
                found = holders[trait] = set()
            found.add(provider)
        if self.resolved.sharing_trait is not None:
            snapshot.sharing = set(holders.get(self.resolved.sharing_trait, ()))

    def _load_aggregates(self, snapshot: Snapshot) -> None:
        aggregates = self.resolved.mentioned_aggregates
        if not aggregates:
            return
        # ids first (a few rows), then the members as integers only: no uuid
        # string per member row
        uuid_of = dict(self.connection.execute(
            _AGGREGATE_IDS, {"uuids": sorted(aggregates)}).all())
        members: dict[int, set[int]] = {aggregate: set() for aggregate in uuid_of}
        for aggregate, provider in _AGGREGATE_MEMBERS.rows(self.connection, uuid_of):
            members[aggregate].add(provider)
        for aggregate, uuid in uuid_of.items():
            snapshot.agg_members[uuid] = members[aggregate]

    def _load_in_tree(self, snapshot: Snapshot) -> None:
        uuids = {group.in_tree for group in self.resolved.groups if group.in_tree}
        if not uuids:
            return
        query = sa.select(_rp.c.uuid, sa.func.coalesce(_rp.c.root_provider_id, _rp.c.id)).where(
            in_values(_rp.c.uuid, uuids))
        for uuid, root in connection_rows(self.connection, query):
            snapshot.in_tree_roots[uuid] = root

    def _load_sharing(self, snapshot: Snapshot) -> None:
        """Roots of every provider that shares an aggregate with a sharing provider."""
        if not snapshot.sharing:
            return
        mine = _rpa.alias("mine")
        theirs = _rpa.alias("theirs")
        query = (sa.select(mine.c.resource_provider_id,
                           sa.func.coalesce(_rp.c.root_provider_id, _rp.c.id))
                 .join(theirs, theirs.c.aggregate_id == mine.c.aggregate_id)
                 .join(_rp, _rp.c.id == theirs.c.resource_provider_id)
                 .where(in_ids(mine.c.resource_provider_id, snapshot.sharing))
                 .distinct())
        anchors = snapshot.sharing_anchors
        for sharing, root in connection_rows(self.connection, query):
            anchors.setdefault(sharing, set()).add(root)
        # sharing providers without inventory of a requested class need a root too
        missing = snapshot.sharing - snapshot.root_of.keys()
        if missing:
            self._add_providers(snapshot, _PROVIDERS, missing)

    def load_trees(self, snapshot: Snapshot, roots: Iterable[int]) -> None:
        """Add every provider of the trees rooted at ``roots`` (parents and roots).

        Providers the snapshot already holds (most of a tree: those with an
        inventory of a requested class) are not read again; excluding them by
        id rather than by a condition keeps every tree complete even if
        inventories changed since they were read. Members are in id order.
        """
        wanted = set(roots) - snapshot.tree_members.keys()
        if not wanted:
            return
        members: dict[int, list[int]] = {root: [] for root in wanted}
        for provider, root in snapshot.root_of.items():
            found = members.get(root)
            if found is not None:
                found.append(provider)
        known = [provider for found in members.values() for provider in found]
        read = (self._add_providers(snapshot, _TREES_BUT, wanted, known) if known
                else self._add_providers(snapshot, _TREES, wanted))
        for provider in read:
            members[snapshot.root_of[provider]].append(provider)
        for root, found in members.items():
            snapshot.tree_members[root] = sorted(found) if found else [root]

    def load_summaries(self, snapshot: Snapshot, providers: set[int],
                       roots: set[int] | None = None) -> SummaryData:
        """What ``provider_summaries`` shows about ``providers`` (all in ``snapshot``'s
        trees or sharing), reusing the snapshot's inventory rows where complete.

        ``roots``: ``providers`` are exactly the whole trees of these roots
        (read by root then)."""
        version = self.resolved.request.version
        data = SummaryData(snapshot.uuid_of, snapshot.parent_of, snapshot.root_of)
        resources = data.resources = {provider: [] for provider in providers}
        # the requested classes are in the snapshot already; the unused ones
        # (no allocation: every inventory before the first write) without a
        # usage look-up per row
        for rc, by_provider in snapshot.inventories.items():
            used = snapshot.usage.get(rc)
            shown = providers.intersection(by_provider)
            if used:
                for provider in shown:
                    resources[provider].append(
                        (rc, truncated(by_provider[provider][2]), used.get(provider, 0)))
            else:
                for provider in shown:
                    resources[provider].append((rc, truncated(by_provider[provider][2]), 0))
        others = self.resolved.other_classes() if version >= (1, 27) else None
        if others:  # other classes too
            rows = (_OTHER_INVENTORIES_IN_TREES.rows(self.connection, roots, others)
                    if roots is not None else _OTHER_INVENTORIES.rows(
                        self.connection, providers, self.resolved.requested_classes))
            if rows:
                usage: dict[int, dict[int, int]] = {}
                _add_usage(usage, _OTHER_USAGE.rows(
                    self.connection, {provider for provider, _, _ in rows}, others))
                for provider, rc, product in rows:
                    resources[provider].append(
                        (rc, truncated(product), usage.get(rc, {}).get(provider, 0)))
        if version >= (1, 17):
            rows = (_TRAITS_IN_TREES.rows(self.connection, roots) if roots is not None
                    else _TRAITS_OF.rows(self.connection, providers))
            name_of = dict(_TRAIT_NAMES.rows(self.connection, {trait for _, trait in rows}))
            traits = data.traits
            for provider, trait in rows:
                found = traits.get(provider)
                if found is None:
                    found = traits[provider] = []
                found.append(name_of[trait])
        return data

    def load_uuids(self, snapshot: Snapshot, providers: set[int]) -> None:
        """Make sure ``snapshot.uuid_of`` covers ``providers``."""
        missing = providers - snapshot.uuid_of.keys()
        if not missing:
            return
        if snapshot.has_trees or not missing <= snapshot.root_of.keys():
            self._add_providers(snapshot, _PROVIDERS, missing)
        else:
            snapshot.uuid_of.update(_UUIDS.rows(self.connection, missing))


def _add_usage(usage: dict[int, dict[int, int]], rows: list[tuple]) -> None:
    """(provider, class, sum) rows -> ``usage[class][provider]`` (MySQL sums are Decimal)."""
    for provider, rc, used in rows:
        by_provider = usage.get(rc)
        if by_provider is None:
            by_provider = usage[rc] = {}
        by_provider[provider] = int(used)


@dataclasses.dataclass
class SummaryData:
    """What ``provider_summaries`` shows, for the providers that appear in it."""

    uuid_of: dict[int, str]
    parent_of: dict[int, int | None]
    root_of: dict[int, int]
    #: provider -> [(class id, capacity, used)]: plain tuples, built by the
    #: thousand and only ever unpacked, which a NamedTuple would slow down
    resources: dict[int, list[tuple[int, int, int]]] = dataclasses.field(default_factory=dict)
    traits: dict[int, list[str]] = dataclasses.field(default_factory=dict)

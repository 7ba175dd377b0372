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
from placement_wsgi.capacity import capacity
from placement_wsgi.db import tables
from placement_wsgi.db.rows import connection_rows, in_ids, in_values

_rp = tables.resource_providers
_inv = tables.inventories
_alloc = tables.allocations
_rpt = tables.resource_provider_traits
_rpa = tables.resource_provider_aggregates
_aggs = tables.placement_aggregates
_traits = tables.traits


class Loader:
    """Reads a :class:`Snapshot` for one resolved request over one connection."""

    def __init__(self, connection: Connection, resolved: ResolvedRequest) -> None:
        self.connection = connection
        self.resolved = resolved

    def load(self) -> Snapshot:
        """Everything but the trees (see :meth:`load_trees`)."""
        snapshot = Snapshot()
        connection = self.connection
        snapshot.has_trees = connection.execute(
            sa.select(_rp.c.id).where(_rp.c.parent_provider_id.is_not(None)).limit(1)
        ).first() is not None
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
        query = sa.select(
            _inv.c.resource_provider_id, _inv.c.resource_class_id, _inv.c.total,
            _inv.c.reserved, _inv.c.min_unit, _inv.c.max_unit, _inv.c.step_size,
            _inv.c.allocation_ratio).where(in_ids(_inv.c.resource_class_id, classes))
        usage = (sa.select(_alloc.c.resource_provider_id, _alloc.c.resource_class_id,
                           sa.func.sum(_alloc.c.used))
                 .where(in_ids(_alloc.c.resource_class_id, classes))
                 .group_by(_alloc.c.resource_provider_id, _alloc.c.resource_class_id))
        inventories = snapshot.inventories
        # tuple.__new__ in C: a third cheaper than _make for thousands of rows
        for row in map(functools.partial(tuple.__new__, InventoryRow),
                       connection_rows(self.connection, query)):
            by_provider = inventories.get(row.resource_class)
            if by_provider is None:
                by_provider = inventories[row.resource_class] = {}
            by_provider[row.provider] = row
        _add_usage(snapshot.usage, connection_rows(self.connection, usage))
        if not snapshot.has_trees:
            providers = {provider for by_provider in inventories.values()
                         for provider in by_provider}
            snapshot.root_of.update(zip(providers, providers, strict=True))
            snapshot.parent_of.update(dict.fromkeys(providers))
            return
        self._add_providers(snapshot, sa.exists().where(
            _inv.c.resource_provider_id == _rp.c.id,
            in_ids(_inv.c.resource_class_id, classes)))

    def _add_providers(self, snapshot: Snapshot, where: sa.ColumnElement) -> list[int]:
        """Record uuid, parent and root of the providers matching ``where``."""
        rows = connection_rows(self.connection, sa.select(
            _rp.c.id, _rp.c.uuid, _rp.c.parent_provider_id,
            sa.func.coalesce(_rp.c.root_provider_id, _rp.c.id)).where(where))
        for provider, uuid, parent, root in rows:
            snapshot.uuid_of[provider] = uuid
            snapshot.parent_of[provider] = parent
            snapshot.root_of[provider] = root
        return [provider for provider, _, _, _ in rows]

    def _load_traits(self, snapshot: Snapshot) -> None:
        traits = self.resolved.mentioned_traits
        if self.resolved.sharing_trait is not None:
            traits.add(self.resolved.sharing_trait)
        if not traits:
            return
        holders = snapshot.trait_holders
        for provider, trait in connection_rows(self.connection, sa.select(
                _rpt.c.resource_provider_id, _rpt.c.trait_id).where(
                in_ids(_rpt.c.trait_id, traits))):
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
        query = (sa.select(_aggs.c.uuid, _rpa.c.resource_provider_id)
                 .join(_rpa, _rpa.c.aggregate_id == _aggs.c.id)
                 .where(in_values(_aggs.c.uuid, aggregates)))
        for uuid, provider in connection_rows(self.connection, query):
            snapshot.agg_members.setdefault(uuid, set()).add(provider)

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
            self._add_providers(snapshot, in_ids(_rp.c.id, missing))

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
        where = in_ids(_rp.c.root_provider_id, wanted)
        if known:
            where = sa.and_(where, sa.not_(in_ids(_rp.c.id, known)))
        for provider in self._add_providers(snapshot, where):
            members[snapshot.root_of[provider]].append(provider)
        for root, found in members.items():
            snapshot.tree_members[root] = sorted(found) if found else [root]

    def load_summaries(self, snapshot: Snapshot, providers: set[int]) -> SummaryData:
        """What ``provider_summaries`` shows about ``providers`` (all in ``snapshot``'s
        trees or sharing), reusing the snapshot's inventory rows where complete."""
        version = self.resolved.request.version
        data = SummaryData(snapshot.uuid_of, snapshot.parent_of, snapshot.root_of)
        resources = data.resources = {provider: [] for provider in providers}
        # the requested classes are in the snapshot already
        for rc, by_provider in snapshot.inventories.items():
            used = snapshot.usage.get(rc, {})
            for provider in providers.intersection(by_provider):
                _, _, total, reserved, _, _, _, ratio = by_provider[provider]
                resources[provider].append(
                    (rc, int(capacity(total, reserved, ratio)), used.get(provider, 0)))
        if version >= (1, 27):  # every other class too
            requested = self.resolved.requested_classes
            query = (sa.select(_inv.c.resource_provider_id, _inv.c.resource_class_id,
                               _inv.c.total, _inv.c.reserved, _inv.c.allocation_ratio)
                     .where(in_ids(_inv.c.resource_provider_id, providers),
                            _inv.c.resource_class_id.not_in(sorted(requested))))
            rows = connection_rows(self.connection, query)
            if rows:
                usage: dict[int, dict[int, int]] = {}
                _add_usage(usage, connection_rows(self.connection, sa.select(
                    _alloc.c.resource_provider_id, _alloc.c.resource_class_id,
                    sa.func.sum(_alloc.c.used))
                    .where(in_ids(_alloc.c.resource_provider_id,
                                   {provider for provider, _, _, _, _ in rows}),
                           _alloc.c.resource_class_id.not_in(sorted(requested)))
                    .group_by(_alloc.c.resource_provider_id, _alloc.c.resource_class_id)))
                for provider, rc, total, reserved, ratio in rows:
                    resources[provider].append(
                        (rc, int(capacity(total, reserved, ratio)),
                         usage.get(rc, {}).get(provider, 0)))
        if version >= (1, 17):
            query = (sa.select(_rpt.c.resource_provider_id, _traits.c.name)
                     .join(_traits, _traits.c.id == _rpt.c.trait_id)
                     .where(in_ids(_rpt.c.resource_provider_id, providers)))
            traits = data.traits
            for provider, name in connection_rows(self.connection, query):
                found = traits.get(provider)
                if found is None:
                    found = traits[provider] = []
                found.append(name)
        return data

    def load_uuids(self, snapshot: Snapshot, providers: set[int]) -> None:
        """Make sure ``snapshot.uuid_of`` covers ``providers``."""
        missing = providers - snapshot.uuid_of.keys()
        if missing:
            self._add_providers(snapshot, in_ids(_rp.c.id, missing))


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

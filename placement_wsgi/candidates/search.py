"""Database side of the candidate engine: a few set-based queries per request.

:func:`resolve` turns names into ids (the 400s for unknown resource classes
and traits), :func:`load` reads everything the combination step needs in one
pass per table (never one query per provider):

* every inventory of a requested class with its current usage (a correlated
  ``SUM`` over the covering allocations index) and the provider's root/parent;
* the providers carrying any trait the request mentions (plus
  ``MISC_SHARES_VIA_AGGREGATE``), and the members of every aggregate it names;
* for sharing providers, the roots of everything sharing an aggregate with them;
* on demand, the full (id, parent, root) rows of the trees that matter.

:func:`load_summaries` reads what ``provider_summaries`` shows, for the
providers (or whole trees) of the returned candidates only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.candidates.request import CandidateRequest
from placement_wsgi.capacity import usable
from placement_wsgi.constants import SHARING_TRAIT
from placement_wsgi.db import tables
from placement_wsgi.db.rows import connection_rows

_rp = tables.resource_providers
_inv = tables.inventories
_alloc = tables.allocations
_rpt = tables.resource_provider_traits
_rpa = tables.resource_provider_aggregates
_aggs = tables.placement_aggregates
_traits = tables.traits


@dataclasses.dataclass
class ResolvedGroup:
    """A request group with ids instead of names (aggregates stay uuids)."""

    index: int
    suffix: str
    amounts: tuple[tuple[int, int], ...]           # (resource class id, amount)
    any_of: tuple[frozenset[int], ...] = ()          # trait ids
    forbidden_traits: frozenset[int] = frozenset()
    member_of: tuple[frozenset[str], ...] = ()       # aggregate uuids
    forbidden_aggs: frozenset[str] = frozenset()
    in_tree: str | None = None                       # provider uuid

    @property
    def granular(self) -> bool:
        return self.suffix != ""


@dataclasses.dataclass
class ResolvedRequest:
    """The request in ids, plus the name maps the formatter needs."""

    request: CandidateRequest
    groups: list[ResolvedGroup]
    class_names: dict[int, str]                     # every resource class id -> name
    root_required: frozenset[int] = frozenset()
    root_forbidden: frozenset[int] = frozenset()
    sharing_trait: int | None = None

    @property
    def requested_classes(self) -> set[int]:
        return {rc for group in self.groups for rc, _ in group.amounts}

    @property
    def mentioned_traits(self) -> set[int]:
        traits = set(self.root_required | self.root_forbidden)
        for group in self.groups:
            traits |= group.forbidden_traits
            for any_of in group.any_of:
                traits |= any_of
        return traits

    @property
    def mentioned_aggregates(self) -> set[str]:
        aggregates: set[str] = set()
        for group in self.groups:
            aggregates |= group.forbidden_aggs
            for any_of in group.member_of:
                aggregates |= any_of
        return aggregates


def _in(column: sa.ColumnElement, values: Iterable) -> sa.ColumnElement:
    """``column IN (...)`` with bound values (names and uuids from the query)."""
    return column.in_(sorted(values))


def _in_ids(column: sa.ColumnElement, ids: Iterable[int]) -> sa.ColumnElement:
    """``column IN (1,2,...)`` for integer ids, rendered as text.

    The lists can hold tens of thousands of ids: bound, they would exceed
    drivers' parameter limits; rendered by SQLAlchemy's literal processor,
    they cost microseconds each. :func:`~placement_wsgi.db.rows.connection_rows`
    compiles such statements per execution (they never enter the compiled cache).
    """
    text = ",".join(map(str, map(int, ids)))
    if not text:
        return sa.false()
    return column.op("IN")(sa.literal_column(f"({text})"))


def _missing_traits(names: set[str], known: dict[str, int]) -> None:
    missing = sorted(names - set(known))
    if missing:
        raise errors.BadRequest(f"No such trait(s): {', '.join(missing)}.")


def resolve(connection: Connection, request: CandidateRequest) -> ResolvedRequest:
    """Map class and trait names to ids; 400 on the first unknown name.

    Order: ``root_required`` traits, then per group (query order) its
    resource classes, then its traits.
    """
    class_names = {row.id: row.name for row in connection.execute(
        sa.select(tables.resource_classes.c.id, tables.resource_classes.c.name))}
    class_ids = {name: rc for rc, name in class_names.items()}
    trait_names = set(request.root_required.names) | {SHARING_TRAIT}
    for group in request.groups:
        trait_names |= group.required.names
    trait_ids = {row.name: row.id for row in connection.execute(
        sa.select(_traits.c.name, _traits.c.id).where(_in(_traits.c.name, trait_names)))}
    _missing_traits(request.root_required.names, trait_ids)
    groups = []
    for index, group in enumerate(request.groups):
        for name in group.resources:
            if name not in class_ids:
                raise errors.BadRequest(
                    "Invalid resource class in resources parameter: No such resource "
                    f"class {name}.")
        _missing_traits(group.required.names, trait_ids)
        groups.append(ResolvedGroup(
            index=index,
            suffix=group.suffix,
            amounts=tuple((class_ids[name], amount) for name, amount in group.resources.items()),
            any_of=tuple(frozenset(trait_ids[name] for name in any_of)
                         for any_of in group.required.any_of),
            forbidden_traits=frozenset(trait_ids[name] for name in group.required.forbidden),
            member_of=tuple(frozenset(any_of) for any_of in group.member_of.any_of),
            forbidden_aggs=frozenset(group.member_of.forbidden),
            in_tree=group.in_tree,
        ))
    return ResolvedRequest(
        request=request,
        groups=groups,
        class_names=class_names,
        root_required=frozenset(trait_ids[name] for name in request.root_required.required),
        root_forbidden=frozenset(trait_ids[name] for name in request.root_required.forbidden),
        sharing_trait=trait_ids.get(SHARING_TRAIT),
    )


#: Positions in an inventory row of :attr:`Snapshot.inventories`.
TOTAL, RESERVED, MIN_UNIT, MAX_UNIT, STEP_SIZE, RATIO = range(2, 8)


@dataclasses.dataclass
class Snapshot:
    """What the combination step knows about the providers that matter.

    ``inventories[rc][provider]`` is the inventory row ``(provider, rc, total,
    reserved, min_unit, max_unit, step_size, allocation_ratio)`` and
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
    inventories: dict[int, dict[int, Any]] = dataclasses.field(default_factory=dict)
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
        """How much of ``rc`` one allocation request may put on ``provider``:
        ``min(capacity - used, max_unit)`` (capacity int-truncated, spec §4.3)."""
        key = (provider, rc)
        free = self._room.get(key)
        if free is None:
            row = self.inventories[rc][provider]
            used = self.usage.get(rc, {}).get(provider, 0)
            free = min(usable(row[TOTAL], row[RESERVED], row[RATIO]) - used, row[MAX_UNIT])
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
            _inv.c.allocation_ratio).where(_in_ids(_inv.c.resource_class_id, classes))
        usage = (sa.select(_alloc.c.resource_provider_id, _alloc.c.resource_class_id,
                           sa.func.sum(_alloc.c.used))
                 .where(_in_ids(_alloc.c.resource_class_id, classes))
                 .group_by(_alloc.c.resource_provider_id, _alloc.c.resource_class_id))
        inventories = snapshot.inventories
        for row in connection_rows(self.connection, query):
            by_provider = inventories.get(row[1])
            if by_provider is None:
                by_provider = inventories[row[1]] = {}
            by_provider[row[0]] = row
        _add_usage(snapshot.usage, connection_rows(self.connection, usage))
        if not snapshot.has_trees:
            providers = {provider for by_provider in inventories.values()
                         for provider in by_provider}
            snapshot.root_of.update(zip(providers, providers, strict=True))
            snapshot.parent_of.update(dict.fromkeys(providers))
            return
        self._add_providers(snapshot, sa.exists().where(
            _inv.c.resource_provider_id == _rp.c.id,
            _in_ids(_inv.c.resource_class_id, classes)))

    def _add_providers(self, snapshot: Snapshot, where: sa.ColumnElement) -> list[int]:
        """Record uuid, parent and root of the providers matching ``where``."""
        rows = connection_rows(self.connection, sa.select(
            _rp.c.id, _rp.c.uuid, _rp.c.parent_provider_id,
            sa.func.coalesce(_rp.c.root_provider_id, _rp.c.id)).where(where))
        snapshot.uuid_of.update({row[0]: row[1] for row in rows})
        snapshot.parent_of.update({row[0]: row[2] for row in rows})
        snapshot.root_of.update({row[0]: row[3] for row in rows})
        return [row[0] for row in rows]

    def _load_traits(self, snapshot: Snapshot) -> None:
        traits = self.resolved.mentioned_traits
        if self.resolved.sharing_trait is not None:
            traits.add(self.resolved.sharing_trait)
        if not traits:
            return
        holders = snapshot.trait_holders
        for provider, trait in connection_rows(self.connection, sa.select(
                _rpt.c.resource_provider_id, _rpt.c.trait_id).where(
                _in_ids(_rpt.c.trait_id, traits))):
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
                 .where(_in(_aggs.c.uuid, aggregates)))
        for uuid, provider in connection_rows(self.connection, query):
            snapshot.agg_members.setdefault(uuid, set()).add(provider)

    def _load_in_tree(self, snapshot: Snapshot) -> None:
        uuids = {group.in_tree for group in self.resolved.groups if group.in_tree}
        if not uuids:
            return
        query = sa.select(_rp.c.uuid, sa.func.coalesce(_rp.c.root_provider_id, _rp.c.id)).where(
            _in(_rp.c.uuid, uuids))
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
                 .where(_in_ids(mine.c.resource_provider_id, snapshot.sharing))
                 .distinct())
        anchors = snapshot.sharing_anchors
        for sharing, root in connection_rows(self.connection, query):
            anchors.setdefault(sharing, set()).add(root)
        # sharing providers without inventory of a requested class need a root too
        missing = snapshot.sharing - snapshot.root_of.keys()
        if missing:
            self._add_providers(snapshot, _in_ids(_rp.c.id, missing))

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
        where = _in_ids(_rp.c.root_provider_id, wanted)
        if known:
            where = sa.and_(where, sa.not_(_in_ids(_rp.c.id, known)))
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
                    (rc, usable(total, reserved, ratio), used.get(provider, 0)))
        if version >= (1, 27):  # every other class too
            requested = self.resolved.requested_classes
            query = (sa.select(_inv.c.resource_provider_id, _inv.c.resource_class_id,
                               _inv.c.total, _inv.c.reserved, _inv.c.allocation_ratio)
                     .where(_in_ids(_inv.c.resource_provider_id, providers),
                            _inv.c.resource_class_id.not_in(sorted(requested))))
            rows = connection_rows(self.connection, query)
            if rows:
                usage: dict[int, dict[int, int]] = {}
                _add_usage(usage, connection_rows(self.connection, sa.select(
                    _alloc.c.resource_provider_id, _alloc.c.resource_class_id,
                    sa.func.sum(_alloc.c.used))
                    .where(_in_ids(_alloc.c.resource_provider_id, {row[0] for row in rows}),
                           _alloc.c.resource_class_id.not_in(sorted(requested)))
                    .group_by(_alloc.c.resource_provider_id, _alloc.c.resource_class_id)))
                for provider, rc, total, reserved, ratio in rows:
                    resources[provider].append((rc, usable(total, reserved, ratio),
                                                usage.get(rc, {}).get(provider, 0)))
        if version >= (1, 17):
            query = (sa.select(_rpt.c.resource_provider_id, _traits.c.name)
                     .join(_traits, _traits.c.id == _rpt.c.trait_id)
                     .where(_in_ids(_rpt.c.resource_provider_id, providers)))
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
            self._add_providers(snapshot, _in_ids(_rp.c.id, missing))


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
    #: provider -> [(class id, capacity, used)]
    resources: dict[int, list[tuple[int, int, int]]] = dataclasses.field(default_factory=dict)
    traits: dict[int, list[str]] = dataclasses.field(default_factory=dict)

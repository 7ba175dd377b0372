"""Why a root provider is not an allocation candidate, for every root at once.

The snapshot is the candidate engine's own (``placement_wsgi.candidates``:
the same resolve and bulk loader, one query per table, never one per
provider), so the numbers are the ones Placement decided with. For each
root, the request's groups are checked in query order and the first one
that cannot be served is reported with the first failing stage:

``MISSING_CLASS`` -> ``UNITS`` (min_unit/max_unit/step_size) -> ``CAPACITY``
((total - reserved) x ratio - used vs asked) -> ``MISSING_TRAIT`` ->
``FORBIDDEN_TRAIT`` -> ``NOT_MEMBER`` (member_of, forbidden aggregates) ->
``IN_TREE``; then the request-wide ``ROOT_REQUIRED`` / ``ROOT_FORBIDDEN``.
A root whose every group fits on its own but that Placement did not return
gets ``COMBINATION`` (group_policy=isolate, same_subtree, the capacity of
several groups together) or ``LIMIT`` (cut by ``limit``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.candidates.loader import Loader
from placement_wsgi.candidates.resolved import ResolvedGroup, ResolvedRequest
from placement_wsgi.candidates.sets import meeting_every_group, union
from placement_wsgi.candidates.snapshot import InventoryRow, Snapshot
from placement_wsgi.capacity import truncated
from placement_wsgi.db import tables
from placement_wsgi.db.rows import connection_rows

_EMPTY: frozenset[int] = frozenset()
#: Positions in the loader's inventory rows.


class Reason(enum.Enum):
    """Why a group (or the request) cannot be served by a root's tree."""

    MISSING_CLASS = "missing_class"
    UNITS = "units"
    CAPACITY = "capacity"
    MISSING_TRAIT = "missing_trait"
    FORBIDDEN_TRAIT = "forbidden_trait"
    NOT_MEMBER = "not_member"
    IN_TREE = "in_tree"
    ROOT_REQUIRED = "root_required"
    ROOT_FORBIDDEN = "root_forbidden"
    COMBINATION = "combination"
    LIMIT = "limit"
    NOT_EXPLAINED = "not_explained"


@dataclass
class RootVerdict:
    """One root provider that is not a candidate: which group failed, why, the numbers."""

    uuid: str
    name: str
    group: str | None
    reason: Reason
    detail: str
    numbers: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.uuid, "name": self.name, "group": self.group,
                "reason": self.reason.value, "detail": self.detail, "numbers": self.numbers}


def capacity(row: InventoryRow) -> int:
    """An inventory row's capacity, by the one capacity rule."""
    return truncated(row.capacity)


class _Group:
    """Per-group provider sets, computed once for all roots."""

    def __init__(self, group: ResolvedGroup, snapshot: Snapshot) -> None:
        self.group = group
        self.label = group.suffix or "(unsuffixed)"
        holders, members = snapshot.trait_holders, snapshot.agg_members
        self.has_class: dict[int, set[int]] = {}
        self.units_ok: dict[int, set[int]] = {}
        self.capacity_ok: dict[int, set[int]] = {}
        for rc, amount in group.amounts:
            rows = snapshot.inventories.get(rc, {})
            used = snapshot.usage.get(rc, {})
            self.has_class[rc] = set(rows)
            self.units_ok[rc] = {p for p, row in rows.items()
                                 if row.min_unit <= amount <= row.max_unit
                                 and amount % row.step_size == 0}
            self.capacity_ok[rc] = {p for p, row in rows.items()
                                    if used.get(p, 0) + amount <= capacity(row)}
        self.traits_ok = meeting_every_group(holders, group.any_of)
        self.forbidden_holders = union(holders.get(t, _EMPTY) for t in group.forbidden_traits)
        self.members_ok = meeting_every_group(members, group.member_of)
        self.in_forbidden = union(members.get(a, _EMPTY) for a in group.forbidden_aggs)


class Explainer:
    """Reasons for every root of a resolved request over one snapshot."""

    def __init__(self, resolved: ResolvedRequest, snapshot: Snapshot,
                 roots: Mapping[int, tuple[str, str]], trait_names: Mapping[int, str],
                 terms: Mapping[tuple[int, int], tuple[int, int, float]]) -> None:
        self.resolved = resolved
        #: (provider, class) -> (total, reserved, allocation_ratio) of the requested
        #: classes: the snapshot's rows hold only their product
        self.terms = terms
        self.snapshot = snapshot
        self.roots = roots
        self.groups = [_Group(group, snapshot) for group in resolved.groups]
        self.class_names = resolved.class_names
        self.trait_names = trait_names
        self.shared_with: dict[int, set[int]] = {}
        for provider, anchors in snapshot.sharing_anchors.items():
            for anchor in anchors:
                self.shared_with.setdefault(anchor, set()).add(provider)
        self.in_tree_roots = snapshot.in_tree_roots

    # -- helpers -------------------------------------------------------------

    def _pool(self, root: int) -> set[int]:
        members = self.snapshot.tree_members.get(root) or [root]
        return set(members) | self.shared_with.get(root, set())

    def _numbers(self, provider: int, rc: int, amount: int) -> dict[str, Any]:
        row = self.snapshot.inventories[rc][provider]
        used = self.snapshot.usage.get(rc, {}).get(provider, 0)
        total, reserved, ratio = self.terms[provider, rc]
        return {"provider": self._uuid(provider), "resource_class": self.class_names[rc],
                "total": total, "reserved": reserved,
                "allocation_ratio": float(ratio), "used": used,
                "free": capacity(row) - used, "asked": amount, "min_unit": row.min_unit,
                "max_unit": row.max_unit, "step_size": row.step_size}

    def _uuid(self, provider: int) -> str:
        if provider in self.roots:
            return self.roots[provider][0]
        return self.snapshot.uuid_of.get(provider, str(provider))

    def _names(self, traits: Iterable[int]) -> str:
        return ", ".join(sorted(self.trait_names.get(t, str(t)) for t in traits))

    # -- stages ----------------------------------------------------------------

    def _classes(self, info: _Group, pool: set[int], rc: int, amount: int,
                 ) -> tuple[set[int], tuple[Reason, str, dict[str, Any]] | None]:
        """Providers of ``pool`` that can give ``amount`` of ``rc``, or why none can."""
        name = self.class_names[rc]
        having = pool & info.has_class[rc]
        if not having:
            return having, (Reason.MISSING_CLASS, f"no provider in the tree has {name}",
                            {"resource_class": name, "asked": amount})
        fitting = having & info.units_ok[rc]
        if not fitting:
            numbers = self._numbers(min(having), rc, amount)
            return fitting, (Reason.UNITS, (
                f"{name}: {amount} is outside min_unit {numbers['min_unit']} / max_unit "
                f"{numbers['max_unit']} or not a multiple of step_size "
                f"{numbers['step_size']}"), numbers)
        room = fitting & info.capacity_ok[rc]
        if not room:
            best = max(sorted(fitting), key=lambda p: self._numbers(p, rc, amount)["free"])
            n = self._numbers(best, rc, amount)
            return room, (Reason.CAPACITY, (
                f"{name}: ({n['total']} - {n['reserved']}) x {n['allocation_ratio']:g} - "
                f"{n['used']} = {n['free']} free, asked {amount}"), n)
        return room, None

    def _traits_and_aggregates(self, info: _Group, providers: set[int], root: int
                               ) -> tuple[set[int], tuple[Reason, str, dict[str, Any]] | None]:
        group = info.group
        if info.traits_ok is not None and not providers & info.traits_ok and group.granular:
            wanted = union(set(any_of) for any_of in group.any_of)
            return set(), (Reason.MISSING_TRAIT,
                           f"no fitting provider has the required trait(s) "
                           f"{self._names(wanted)}", {"traits": sorted(self._names(wanted)
                                                                       .split(", "))})
        if info.forbidden_holders:
            kept = providers - info.forbidden_holders
            if not kept:
                return kept, (Reason.FORBIDDEN_TRAIT,
                              "every fitting provider has a forbidden trait "
                              f"({self._names(group.forbidden_traits)})", {})
            providers = kept
        if info.members_ok is not None:
            kept = {p for p in providers if p in info.members_ok or root in info.members_ok}
            if not kept:
                wanted = [sorted(any_of) for any_of in group.member_of]
                return kept, (Reason.NOT_MEMBER,
                              f"not in the member_of aggregates {wanted}",
                              {"member_of": wanted})
            providers = kept
        if info.in_forbidden:
            kept = {p for p in providers
                    if p not in info.in_forbidden and root not in info.in_forbidden}
            if not kept:
                return kept, (Reason.NOT_MEMBER, "in a forbidden aggregate "
                              f"{sorted(group.forbidden_aggs)}",
                              {"forbidden_aggregates": sorted(group.forbidden_aggs)})
            providers = kept
        if group.in_tree is not None and self.in_tree_roots.get(group.in_tree) != root:
            return set(), (Reason.IN_TREE, f"not in the tree of in_tree {group.in_tree}",
                           {"in_tree": group.in_tree})
        return providers, None

    def _group_failure(self, info: _Group, root: int, pool: set[int]
                       ) -> tuple[Reason, str, dict[str, Any]] | None:
        group = info.group
        if group.granular:
            providers = set(pool)
            for rc, amount in group.amounts:
                narrowed, why = self._classes(info, providers, rc, amount)
                if why and why[0] is Reason.MISSING_CLASS and pool & info.has_class[rc]:
                    classes = ", ".join(self.class_names[c] for c, _ in group.amounts)
                    return (Reason.MISSING_CLASS, "no single provider of the tree has "
                            f"room for all of {classes}", why[2])
                if why:
                    return why
                providers = narrowed
            return self._traits_and_aggregates(info, providers, root)[1]
        chosen: set[int] = set()
        for rc, amount in group.amounts:
            providers, why = self._classes(info, pool, rc, amount)
            if why:
                return why
            providers, why = self._traits_and_aggregates(info, providers, root)
            if why:
                return why
            chosen |= providers
        if group.any_of:
            # the providers serving the group together must hold the traits
            traits = union(self.snapshot.traits_of(p) for p in chosen or pool)
            missing = [any_of for any_of in group.any_of if traits.isdisjoint(any_of)]
            if missing:
                wanted = union(set(any_of) for any_of in missing)
                return (Reason.MISSING_TRAIT,
                        f"the tree lacks the required trait(s) {self._names(wanted)}",
                        {"traits": sorted(self._names(wanted).split(", "))})
        return None

    def _root_failure(self, root: int) -> tuple[Reason, str, dict[str, Any]] | None:
        holders = self.snapshot.trait_holders
        missing = [t for t in self.resolved.root_required if root not in holders.get(t, _EMPTY)]
        if missing:
            return (Reason.ROOT_REQUIRED, f"root lacks required trait(s) {self._names(missing)}",
                    {"traits": self._names(missing).split(", ")})
        present = [t for t in self.resolved.root_forbidden if root in holders.get(t, _EMPTY)]
        if present:
            return (Reason.ROOT_FORBIDDEN, f"root has forbidden trait(s) {self._names(present)}",
                    {"traits": self._names(present).split(", ")})
        return None

    def explain(self, candidates: set[str], limited: bool) -> list[RootVerdict]:
        """A verdict for every root whose uuid is not in ``candidates``, in id order."""
        verdicts = []
        for root in sorted(self.roots):
            uuid, name = self.roots[root]
            if uuid in candidates:
                continue
            failure, label = None, None
            pool = self._pool(root)
            for info in self.groups:
                failure = self._group_failure(info, root, pool)
                if failure:
                    label = info.label
                    break
            if failure is None:
                failure = self._root_failure(root)
            if failure is None:
                failure = ((Reason.LIMIT, "fits, but Placement's answer stopped at limit", {})
                           if limited else
                           (Reason.COMBINATION, "every group fits alone, but not together "
                            "(group_policy, same_subtree or their summed capacity)", {}))
            reason, detail, numbers = failure
            verdicts.append(RootVerdict(uuid, name, label, reason, detail, numbers))
        return verdicts


def load_roots(connection: Connection) -> dict[int, tuple[str, str]]:
    """``{root id: (uuid, name)}`` of every root provider, in one query."""
    rp = tables.resource_providers
    rows = connection_rows(connection, sa.select(rp.c.id, rp.c.uuid, rp.c.name).where(
        rp.c.parent_provider_id.is_(None)))
    return {row[0]: (row[1], row[2]) for row in rows}


def explain_roots(connection: Connection, resolved: ResolvedRequest, candidates: set[str],
                  limited: bool) -> tuple[list[RootVerdict], int]:
    """Verdicts for every non-candidate root, and the number of roots."""
    loader = Loader(connection, resolved)
    snapshot = loader.load()
    roots = load_roots(connection)
    if snapshot.has_trees:
        loader.load_trees(snapshot, roots)
    traits = tables.traits
    trait_names = dict(connection_rows(connection, sa.select(traits.c.id, traits.c.name).where(
        traits.c.id.in_(sorted(resolved.mentioned_traits)))))
    explainer = Explainer(resolved, snapshot, roots, trait_names,
                          load_terms(connection, resolved.requested_classes))
    return explainer.explain(candidates, limited), len(roots)


def load_terms(connection: Connection, classes: Iterable[int]
               ) -> dict[tuple[int, int], tuple[int, int, float]]:
    """``{(provider, class): (total, reserved, allocation_ratio)}`` of every inventory
    of ``classes``, in one query: the numbers a verdict shows."""
    inv = tables.inventories
    rows = connection_rows(connection, sa.select(
        inv.c.resource_provider_id, inv.c.resource_class_id, inv.c.total, inv.c.reserved,
        inv.c.allocation_ratio).where(inv.c.resource_class_id.in_(sorted(classes))))
    return {(provider, rc): (total, reserved, ratio)
            for provider, rc, total, reserved, ratio in rows}

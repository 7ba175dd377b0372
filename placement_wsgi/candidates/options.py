"""Which providers may serve each part of a request, per anchor.

Vocabulary:

* A **slot** is one thing a single provider must serve: a suffixed group (all
  of its resources, or none for a resourceless group) or one resource class
  of the unsuffixed group (each class of that group may come from a
  different provider).
* An **anchor** is the root of the tree a candidate is built around. For
  every slot, :func:`build_options` lists per anchor the providers that may
  serve it; only anchors with options for every slot are *viable*.

Every builder applies a group's own conditions through one
:class:`GroupFilter`; they differ only in how providers attach to anchors
(a suffixed group's provider alone; an unsuffixed class through sharing,
where aggregate conditions may be met by the anchor instead).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from placement_wsgi.candidates.resolved import ResolvedGroup, ResolvedRequest
from placement_wsgi.candidates.sets import meeting_every_group, union
from placement_wsgi.candidates.snapshot import Snapshot

_EMPTY: frozenset = frozenset()

#: ``load_trees(roots)``: add the whole trees rooted at ``roots`` to the snapshot
TreeLoader = Callable[[Iterable[int]], None]


@dataclasses.dataclass(frozen=True)
class Slot:
    """One provider's share of the request: a suffixed group or an unsuffixed class."""

    group: int                               # index into ResolvedRequest.groups
    amounts: tuple[tuple[int, int], ...]     # (resource class id, amount)
    granular: bool


class GroupFilter:
    """A group's conditions on its own providers, as sets computed once.

    ``required``: providers whose own traits meet every any-of set (suffixed
    groups only: the unsuffixed group's any-of is judged on the union of its
    providers); ``forbidden``: providers holding a forbidden trait;
    ``members``: providers in at least one aggregate of every ``member_of``
    set; ``forbidden_members``: providers in a forbidden aggregate. None
    means no condition. ``tree_root`` is the root of the ``in_tree``
    provider (-1 when it is unknown: nothing matches).
    """

    def __init__(self, snapshot: Snapshot, group: ResolvedGroup) -> None:
        holders = snapshot.trait_holders
        members = snapshot.agg_members
        self.required = meeting_every_group(holders, group.any_of) if group.granular else None
        self.forbidden = union(holders.get(trait, _EMPTY) for trait in group.forbidden_traits)
        self.members = meeting_every_group(members, group.member_of)
        self.forbidden_members = union(members.get(uuid, _EMPTY)
                                       for uuid in group.forbidden_aggs)
        self.tree_root = (None if group.in_tree is None
                          else snapshot.in_tree_roots.get(group.in_tree, -1))

    def keep(self, providers: set[int], *, aggregates: bool = True) -> set[int]:
        """``providers`` meeting the trait conditions and, unless told not to,
        the aggregate ones (a sharing provider may meet those through its anchor)."""
        if self.required is not None:
            providers = providers & self.required
        if self.forbidden:
            providers = providers - self.forbidden
        if aggregates:
            if self.members is not None:
                providers = providers & self.members
            if self.forbidden_members:
                providers = providers - self.forbidden_members
        return providers

    def admits(self, provider: int, anchor: int) -> bool:
        """The aggregate conditions for ``provider`` attached to ``anchor``: either
        may be the member; neither may be in a forbidden aggregate."""
        if self.members is not None and provider not in self.members \
                and anchor not in self.members:
            return False
        return not (self.forbidden_members and (provider in self.forbidden_members
                                                or anchor in self.forbidden_members))


def serves_alone(resolved: ResolvedRequest, snapshot: Snapshot) -> bool:
    """No trees, no sharing, only the unsuffixed group: every candidate is one
    provider serving every class, found with set algebra alone."""
    return (not snapshot.has_trees and not snapshot.sharing
            and all(not group.granular for group in resolved.groups))


class ProviderChooser:
    """The provider filters of one request over one snapshot (memoised)."""

    def __init__(self, resolved: ResolvedRequest, snapshot: Snapshot) -> None:
        self.resolved = resolved
        self.snapshot = snapshot
        self._capable: dict[tuple[int, int], set[int]] = {}
        self._root_ok: dict[int, bool] = {}
        self._filters: dict[int, GroupFilter] = {}

    def group_filter(self, group: ResolvedGroup) -> GroupFilter:
        found = self._filters.get(group.index)
        if found is None:
            found = self._filters[group.index] = GroupFilter(self.snapshot, group)
        return found

    def capable(self, rc: int, amount: int) -> set[int]:
        """Providers where one allocation of ``amount`` of ``rc`` fits: units, step,
        and usage against the exact capacity (as writes check it)."""
        key = (rc, amount)
        found = self._capable.get(key)
        if found is None:
            used = self.snapshot.usage.get(rc, {})
            # unpacked by name: cheaper than attribute access over thousands of rows
            found = {provider
                     for provider, (_, _, product, min_unit, max_unit, step_size)
                     in self.snapshot.inventories.get(rc, {}).items()
                     if min_unit <= amount <= max_unit
                     and used.get(provider, 0) + amount <= product
                     and amount % step_size == 0}
            self._capable[key] = found
        return found

    def with_capacity(self, group: ResolvedGroup) -> set[int]:
        """Providers with capacity for every amount of ``group``."""
        providers: set[int] | None = None
        for rc, amount in group.amounts:
            capable = self.capable(rc, amount)
            providers = set(capable) if providers is None else providers & capable
        return providers or set()

    def holders_of_all(self, any_of: tuple[frozenset[int], ...]) -> set[int] | None:
        """Providers whose own traits meet every any-of set (None: no condition)."""
        return meeting_every_group(self.snapshot.trait_holders, any_of)

    @property
    def root_filtered(self) -> bool:
        return bool(self.resolved.root_required or self.resolved.root_forbidden)

    def root_ok(self, anchor: int) -> bool:
        """The ``root_required`` filter on an anchor."""
        ok = self._root_ok.get(anchor)
        if ok is None:
            holders = self.snapshot.trait_holders
            ok = (all(anchor in holders.get(trait, _EMPTY)
                      for trait in self.resolved.root_required)
                  and not any(anchor in holders.get(trait, _EMPTY)
                              for trait in self.resolved.root_forbidden))
            self._root_ok[anchor] = ok
        return ok

    def anchors_of(self, provider: int) -> set[int]:
        """Its own root, plus every anchor it shares with when it is a sharing provider."""
        anchors = {self.snapshot.root_of[provider]}
        if provider in self.snapshot.sharing:
            anchors |= self.snapshot.sharing_anchors.get(provider, _EMPTY)
        return anchors

    # -- the three option builders ------------------------------------------------

    def granular(self, group: ResolvedGroup, providers: set[int]) -> dict[int, list[int]]:
        """The providers that alone satisfy a suffixed group, per anchor."""
        snapshot = self.snapshot
        group_filter = self.group_filter(group)
        providers = group_filter.keep(providers)
        tree_root = group_filter.tree_root
        simple = not snapshot.sharing and not self.root_filtered
        if simple and not snapshot.has_trees and tree_root is None:
            return {provider: [provider] for provider in providers}
        by_anchor: dict[int, list[int]] = {}
        root_of = snapshot.root_of
        for provider in sorted(providers):
            root = root_of[provider]
            if tree_root is not None and root != tree_root:
                continue
            if simple:
                by_anchor.setdefault(root, []).append(provider)
                continue
            for anchor in self.anchors_of(provider):
                if self.root_ok(anchor):
                    by_anchor.setdefault(anchor, []).append(provider)
        return by_anchor

    def unsuffixed(self, group: ResolvedGroup, rc: int, amount: int) -> dict[int, list[int]]:
        """(provider, anchor) pairs for one class of the unsuffixed group."""
        snapshot = self.snapshot
        group_filter = self.group_filter(group)
        providers = group_filter.keep(self.capable(rc, amount), aggregates=False)
        tree_root = group_filter.tree_root
        root_filter = self.root_filtered
        root_of = snapshot.root_of
        sharing = snapshot.sharing if tree_root is None else _EMPTY
        by_anchor: dict[int, list[int]] = {}
        if not snapshot.has_trees:
            # every provider is its own root: the non-sharing ones are filtered as sets
            by_anchor = {provider: [provider] for provider in self.plain(group, rc, amount)}
            providers = providers & sharing
        members = group_filter.members
        for provider in sorted(providers):
            root = root_of[provider]
            if tree_root is not None and root != tree_root:
                continue
            if provider in sharing and (members is None or provider in members):
                anchors: Iterable[int] = self.anchors_of(provider)
            else:
                anchors = (root,)
            for anchor in anchors:
                if not group_filter.admits(provider, anchor):
                    continue
                if root_filter and not self.root_ok(anchor):
                    continue
                by_anchor.setdefault(anchor, []).append(provider)
        return by_anchor

    def plain(self, group: ResolvedGroup, rc: int, amount: int) -> set[int]:
        """Without trees: the non-sharing providers that serve (rc, amount) for the
        unsuffixed group, each anchored at itself (set algebra only)."""
        group_filter = self.group_filter(group)
        plain = self.capable(rc, amount)
        if group_filter.tree_root is None:
            plain = plain - self.snapshot.sharing
        else:
            plain = plain & {group_filter.tree_root}
        plain = group_filter.keep(plain)
        if self.root_filtered:
            plain = {provider for provider in plain if self.root_ok(provider)}
        return plain


@dataclasses.dataclass
class Options:
    """Every slot of a request and, per slot, its providers per anchor.

    ``alone`` (:func:`serves_alone`): ``options`` is empty and every anchor
    in ``anchors`` is a candidate serving every slot by itself.
    """

    slots: list[Slot]
    options: list[dict[int, list[int]]]
    anchors: list[int]
    n_unsuffixed: int
    unsuffixed_any_of: tuple[frozenset[int], ...]
    alone: bool

    #: ``alone``: per slot, the providers that could serve it by themselves
    alone_sets: list[set[int]] = dataclasses.field(default_factory=list)

    def anchors_per_slot(self) -> list[int]:
        """How many anchors each slot has options at (for the debug counters)."""
        if self.alone:
            return [len(found) for found in self.alone_sets]
        return [len(by_anchor) for by_anchor in self.options]


def _viable_anchors(options: list[dict[int, list[int]]]) -> list[int]:
    if not options:
        return []
    anchors = set(options[0])
    for by_anchor in options[1:]:
        anchors &= by_anchor.keys()
    return sorted(anchors)


def _ensure_trees(snapshot: Snapshot, anchors: Iterable[int],
                  load_trees: TreeLoader | None) -> None:
    roots = set(anchors) | {snapshot.root_of[provider] for provider in snapshot.sharing
                            if provider in snapshot.root_of}
    if not snapshot.has_trees:
        for root in roots:
            snapshot.tree_members.setdefault(root, [root])
            snapshot.root_of.setdefault(root, root)
            snapshot.parent_of.setdefault(root, None)
    elif load_trees is not None:
        load_trees(roots)


def _tree_providers(snapshot: Snapshot, anchors: list[int]) -> set[int]:
    """Every provider of the viable trees, plus the sharing providers."""
    providers = union(set(snapshot.tree_members.get(anchor, (anchor,))) for anchor in anchors)
    return providers | {provider for provider in snapshot.sharing
                        if provider in snapshot.root_of}


def build_options(resolved: ResolvedRequest, snapshot: Snapshot,
                  load_trees: TreeLoader | None = None) -> Options:
    """The slots of ``resolved`` in order (unsuffixed classes, suffixed groups with
    resources, resourceless groups) and their options.

    ``load_trees`` is called (at most twice) when the request needs whole
    trees: resourceless groups draw from every provider of a viable tree, and
    ``same_subtree`` needs the ancestry of the providers involved.
    """
    chooser = ProviderChooser(resolved, snapshot)
    alone = serves_alone(resolved, snapshot)
    slots: list[Slot] = []
    options: list[dict[int, list[int]]] = []
    unsuffixed_any_of: tuple[frozenset[int], ...] = ()
    alone_sets: list[set[int]] = []
    for group in resolved.groups:
        if group.granular:
            continue
        unsuffixed_any_of = group.any_of
        for rc, amount in group.amounts:
            slots.append(Slot(group.index, ((rc, amount),), False))
            if alone:
                alone_sets.append(chooser.plain(group, rc, amount))
            else:
                options.append(chooser.unsuffixed(group, rc, amount))
    n_unsuffixed = len(slots)
    if alone:
        anchors = set.intersection(*alone_sets) if alone_sets else set()
        meets_all = chooser.holders_of_all(unsuffixed_any_of)
        if meets_all is not None:  # one provider's own traits must meet them
            anchors &= meets_all
        return Options(slots, options, sorted(anchors), n_unsuffixed, unsuffixed_any_of,
                       True, alone_sets)
    granular = [group for group in resolved.groups if group.granular]
    for group in granular:
        if group.amounts:
            slots.append(Slot(group.index, group.amounts, True))
            options.append(chooser.granular(group, chooser.with_capacity(group)))
    anchors = _viable_anchors(options)
    resourceless = [group for group in granular if not group.amounts]
    if resourceless or (resolved.request.same_subtrees and snapshot.has_trees):
        _ensure_trees(snapshot, anchors, load_trees)
    if resourceless:
        providers = _tree_providers(snapshot, anchors)
        for group in resourceless:
            slots.append(Slot(group.index, (), True))
            options.append(chooser.granular(group, providers))
        anchors = _viable_anchors(options)
    return Options(slots, options, anchors, n_unsuffixed, unsuffixed_any_of, False)

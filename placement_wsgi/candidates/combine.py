"""Building allocation candidates from a :class:`~.search.Snapshot` (spec §4).

Vocabulary:

* A **slot** is one thing a single provider must serve: a suffixed group (all
  of its resources, or none for a resourceless group) or one resource class
  of the unsuffixed group (each class of that group may come from a
  different provider).
* For every slot the :class:`Plan` computes, per **anchor** (the root of the
  tree a candidate is built around), the providers that may serve it. Only
  anchors that have options for every slot are *viable*.
* A **candidate** is a tuple with one provider id per slot (in slot order).
  Two candidates are the same allocation request with the same mappings
  exactly when their tuples are equal, so the tuple is also the dedupe key.

Per anchor, the candidates are enumerated lazily by a depth-first search
over the slots that checks every constraint on the partial assignment
(capacity of sums, ``isolate``, ``same_subtree``, the pre-1.29 one-provider-
per-tree rule), so an impossible prefix is never extended. Before searching
an anchor, cheap necessary conditions (total free capacity per class against
total demand, enough distinct providers and a matching for ``isolate``) skip
trees that cannot hold the request at all. Anchors are visited depth-first
or round-robin (breadth-first); the caller stops the generator once it has
enough candidates.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable, Iterator

from placement_wsgi.candidates.product import (
    SMALL_PRODUCT,
    product_candidates,
    product_size,
    search_order,
)
from placement_wsgi.candidates.search import (
    MAX_UNIT,
    MIN_UNIT,
    RATIO,
    RESERVED,
    STEP_SIZE,
    TOTAL,
    ResolvedGroup,
    ResolvedRequest,
    Snapshot,
)
from placement_wsgi.candidates.sets import has_matching as _has_matching
from placement_wsgi.candidates.sets import meeting_every_group
from placement_wsgi.candidates.sets import union as _union
from placement_wsgi.candidates.subtree import TreeGeometry

_EMPTY: frozenset = frozenset()

BREADTH_FIRST = "breadth-first"
DEPTH_FIRST = "depth-first"


@dataclasses.dataclass(frozen=True)
class Slot:
    """One provider's share of the request: a suffixed group or an unsuffixed class."""

    group: int                               # index into ResolvedRequest.groups
    amounts: tuple[tuple[int, int], ...]     # (resource class id, amount)
    granular: bool


class Plan:
    """The per-anchor options of every slot, and the constraints that tie them.

    ``load_trees(roots)`` is called (at most twice) when the request needs
    whole trees: resourceless groups draw from every provider of a viable
    tree, and ``same_subtree`` needs the ancestry of the providers involved.
    """

    def __init__(self, resolved: ResolvedRequest, snapshot: Snapshot,
                 load_trees: Callable[[Iterable[int]], None] | None = None) -> None:
        self.resolved = resolved
        self.snapshot = snapshot
        self._load_trees = load_trees
        request = resolved.request
        self._capable_cache: dict[tuple[int, int], set[int]] = {}
        self._root_ok_cache: dict[int, bool] = {}
        self.slots: list[Slot] = []
        self.options: list[dict[int, list[int]]] = []
        self.unsuffixed_any_of: tuple[frozenset[int], ...] = ()
        self.n_unsuffixed = 0
        #: flat: no trees, no sharing, one unsuffixed group: every candidate is
        #: one provider serving everything, found with set algebra alone
        self.flat = (not snapshot.has_trees and not snapshot.sharing
                     and all(not group.granular for group in resolved.groups))
        flat_sets = []
        for group in resolved.groups:
            if not group.granular:
                self.unsuffixed_any_of = group.any_of
                for rc, amount in group.amounts:
                    self.slots.append(Slot(group.index, ((rc, amount),), False))
                    self.n_unsuffixed += 1
                    if self.flat:
                        flat_sets.append(self._plain_unsuffixed(group, rc, amount))
                    else:
                        self.options.append(self._unsuffixed_options(group, rc, amount))
        if self.flat:
            anchors = set.intersection(*flat_sets) if flat_sets else set()
            meets_all = self._holders_of_all(self.unsuffixed_any_of)
            if meets_all is not None:  # one provider's own traits must meet them
                anchors &= meets_all
            self.anchors = sorted(anchors)
            self._init_constraints()
            return
        granular = [group for group in resolved.groups if group.granular]
        for group in granular:
            if group.amounts:
                self.slots.append(Slot(group.index, group.amounts, True))
                self.options.append(self._granular_options(group, self._with_capacity(group)))
        self.anchors = self._viable_anchors()
        resourceless = [group for group in granular if not group.amounts]
        self._subtree_needed = bool(request.same_subtrees) and snapshot.has_trees
        if resourceless or self._subtree_needed:
            self._ensure_trees(self.anchors)
        for group in resourceless:
            self.slots.append(Slot(group.index, (), True))
            self.options.append(self._granular_options(group, self._tree_providers()))
        if resourceless:
            self.anchors = self._viable_anchors()
        self._init_constraints()

    # -- provider filters ------------------------------------------------------

    def _capable(self, rc: int, amount: int) -> set[int]:
        """Providers with capacity for ``amount`` of ``rc`` (spec §4 "capacity")."""
        key = (rc, amount)
        found = self._capable_cache.get(key)
        if found is None:
            rows = self.snapshot.inventories.get(rc, {})
            used = self.snapshot.usage.get(rc, {})
            found = {provider for provider, row in rows.items()
                     if row[MIN_UNIT] <= amount <= row[MAX_UNIT]
                     and used.get(provider, 0) + amount
                     <= (row[TOTAL] - row[RESERVED]) * row[RATIO]
                     and amount % row[STEP_SIZE] == 0}
            self._capable_cache[key] = found
        return found

    def _with_capacity(self, group: ResolvedGroup) -> set[int]:
        providers: set[int] | None = None
        for rc, amount in group.amounts:
            capable = self._capable(rc, amount)
            providers = set(capable) if providers is None else providers & capable
        return providers or set()

    def _holders_of_all(self, any_of: tuple[frozenset[int], ...]) -> set[int] | None:
        """Providers whose own traits meet every any-of set (None: no condition)."""
        return meeting_every_group(self.snapshot.trait_holders, any_of)

    def _members_of_all(self, member_of: tuple[frozenset[str], ...]) -> set[int] | None:
        """Providers directly in ≥1 aggregate of every set (None: no condition)."""
        return meeting_every_group(self.snapshot.agg_members, member_of)

    def _root_ok(self, anchor: int) -> bool:
        """The ``root_required`` filter on an anchor."""
        ok = self._root_ok_cache.get(anchor)
        if ok is None:
            holders = self.snapshot.trait_holders
            ok = (all(anchor in holders.get(trait, _EMPTY)
                      for trait in self.resolved.root_required)
                  and not any(anchor in holders.get(trait, _EMPTY)
                              for trait in self.resolved.root_forbidden))
            self._root_ok_cache[anchor] = ok
        return ok

    def _anchors_of(self, provider: int) -> set[int]:
        """Its own root, plus every anchor it shares with when it is a sharing provider."""
        anchors = {self.snapshot.root_of[provider]}
        if provider in self.snapshot.sharing:
            anchors |= self.snapshot.sharing_anchors.get(provider, _EMPTY)
        return anchors

    def _in_tree_root(self, group: ResolvedGroup) -> int | None:
        """Root of the group's ``in_tree`` provider; -1 when that provider is unknown."""
        if group.in_tree is None:
            return None
        return self.snapshot.in_tree_roots.get(group.in_tree, -1)

    # -- options per slot -----------------------------------------------------

    def _granular_options(self, group: ResolvedGroup,
                          providers: set[int]) -> dict[int, list[int]]:
        """Spec §4.1: the providers that alone satisfy a suffixed group, per anchor."""
        snapshot = self.snapshot
        traits_ok = self._holders_of_all(group.any_of)
        if traits_ok is not None:
            providers = providers & traits_ok
        if group.forbidden_traits:
            providers = providers - _union(
                snapshot.trait_holders.get(trait, _EMPTY) for trait in group.forbidden_traits)
        members_ok = self._members_of_all(group.member_of)
        if members_ok is not None:
            providers = providers & members_ok
        if group.forbidden_aggs:
            providers = providers - _union(
                snapshot.agg_members.get(uuid, _EMPTY) for uuid in group.forbidden_aggs)
        tree_root = self._in_tree_root(group)
        by_anchor: dict[int, list[int]] = {}
        root_of = snapshot.root_of
        sharing = snapshot.sharing
        simple = not sharing and not self.resolved.root_required \
            and not self.resolved.root_forbidden
        if simple and not snapshot.has_trees and tree_root is None:
            return {provider: [provider] for provider in providers}
        for provider in sorted(providers):
            root = root_of[provider]
            if tree_root is not None and root != tree_root:
                continue
            if simple:
                by_anchor.setdefault(root, []).append(provider)
                continue
            for anchor in self._anchors_of(provider):
                if self._root_ok(anchor):
                    by_anchor.setdefault(anchor, []).append(provider)
        return by_anchor

    def _unsuffixed_options(self, group: ResolvedGroup, rc: int,
                            amount: int) -> dict[int, list[int]]:
        """Spec §4.2: (provider, anchor) pairs for one class of the unsuffixed group."""
        snapshot = self.snapshot
        providers = self._capable(rc, amount)
        if group.forbidden_traits:
            providers = providers - _union(
                snapshot.trait_holders.get(trait, _EMPTY) for trait in group.forbidden_traits)
        members_ok = self._members_of_all(group.member_of)
        forbidden = _union(snapshot.agg_members.get(uuid, _EMPTY)
                           for uuid in group.forbidden_aggs)
        tree_root = self._in_tree_root(group)
        root_filter = bool(self.resolved.root_required or self.resolved.root_forbidden)
        root_of = snapshot.root_of
        sharing = snapshot.sharing if tree_root is None else _EMPTY
        by_anchor: dict[int, list[int]] = {}
        if not snapshot.has_trees:
            # every provider is its own root: the non-sharing ones are filtered as sets
            plain = self._plain_unsuffixed(group, rc, amount)
            by_anchor = {provider: [provider] for provider in plain}
            providers = providers & sharing
        for provider in sorted(providers):
            root = root_of[provider]
            if tree_root is not None and root != tree_root:
                continue
            if provider in sharing and (members_ok is None or provider in members_ok):
                anchors: Iterable[int] = self._anchors_of(provider)
            else:
                anchors = (root,)
            for anchor in anchors:
                if members_ok is not None and provider not in members_ok \
                        and anchor not in members_ok:
                    continue
                if forbidden and (provider in forbidden or anchor in forbidden):
                    continue
                if root_filter and not self._root_ok(anchor):
                    continue
                by_anchor.setdefault(anchor, []).append(provider)
        return by_anchor

    def _plain_unsuffixed(self, group: ResolvedGroup, rc: int, amount: int) -> set[int]:
        """Without trees: the non-sharing providers that serve (rc, amount) for the
        unsuffixed group, each anchored at itself (spec §4.2 as set algebra)."""
        snapshot = self.snapshot
        tree_root = self._in_tree_root(group)
        plain = self._capable(rc, amount)
        if tree_root is None:
            plain = plain - snapshot.sharing
        else:
            plain = plain & {tree_root}
        if group.forbidden_traits:
            plain = plain - _union(
                snapshot.trait_holders.get(trait, _EMPTY) for trait in group.forbidden_traits)
        members_ok = self._members_of_all(group.member_of)
        if members_ok is not None:
            plain = plain & members_ok
        if group.forbidden_aggs:
            plain = plain - _union(snapshot.agg_members.get(uuid, _EMPTY)
                                   for uuid in group.forbidden_aggs)
        if self.resolved.root_required or self.resolved.root_forbidden:
            plain = {provider for provider in plain if self._root_ok(provider)}
        return plain

    def _viable_anchors(self) -> list[int]:
        if not self.options:
            return []
        anchors = set(self.options[0])
        for options in self.options[1:]:
            anchors &= options.keys()
        return sorted(anchors)

    def _ensure_trees(self, anchors: Iterable[int]) -> None:
        roots = set(anchors) | {self.snapshot.root_of[provider]
                                for provider in self.snapshot.sharing
                                if provider in self.snapshot.root_of}
        if not self.snapshot.has_trees:
            for root in roots:
                self.snapshot.tree_members.setdefault(root, [root])
                self.snapshot.root_of.setdefault(root, root)
                self.snapshot.parent_of.setdefault(root, None)
        elif self._load_trees is not None:
            self._load_trees(roots)

    def _tree_providers(self) -> set[int]:
        """Every provider of the viable trees, plus the sharing providers."""
        providers = _union(set(self.snapshot.tree_members.get(anchor, (anchor,)))
                           for anchor in self.anchors)
        return providers | {provider for provider in self.snapshot.sharing
                            if provider in self.snapshot.root_of}

    # -- constraints -----------------------------------------------------------

    def _init_constraints(self) -> None:
        request = self.resolved.request
        snapshot = self.snapshot
        slots = self.slots
        uses: dict[int, list[tuple[int, int]]] = collections.defaultdict(list)
        for index, slot in enumerate(slots):
            for rc, amount in slot.amounts:
                uses[rc].append((index, amount))
        #: classes asked for by more than one slot: only they need sums checked
        self.shared_classes = {rc: slot_amounts for rc, slot_amounts in uses.items()
                               if len(slot_amounts) > 1}
        granular = [index for index, slot in enumerate(slots) if slot.granular]
        self.isolate_slots = granular if request.isolate and len(granular) > 1 else []
        self.legacy = not request.nested_aware and snapshot.has_trees
        by_suffix = {self.resolved.groups[slot.group].suffix: index
                     for index, slot in enumerate(slots) if slot.granular}
        self.subtrees: list[list[int]] = []
        for suffixes in request.same_subtrees:
            members = sorted({by_suffix[suffix] for suffix in suffixes if suffix in by_suffix})
            if len(members) > 1:
                self.subtrees.append(members)
        self.subtrees_of: dict[int, list[list[int]]] = collections.defaultdict(list)
        for members in self.subtrees:
            for index in members:
                self.subtrees_of[index].append(members)
        self.simple = not (self.shared_classes or self.isolate_slots or self.legacy
                           or self.subtrees)
        #: only any-of and same_subtree tie slots: small anchors need no search
        self.product_ok = not (self.shared_classes or self.isolate_slots or self.legacy)
        self.geometry = TreeGeometry(self.snapshot.parent_of, self.snapshot.root_of)
        self._seen: set[tuple[int, ...]] = set()
        self._meets_all = self._holders_of_all(self.unsuffixed_any_of) or set()

    # -- anchor-level pruning --------------------------------------------------

    def _feasible(self, options: list[list[int]]) -> bool:
        """Necessary conditions; False means the tree cannot hold the request."""
        room = self.snapshot.room
        for rc, slot_amounts in self.shared_classes.items():
            providers = _union(set(options[index]) for index, _ in slot_amounts)
            demand = sum(amount for _, amount in slot_amounts)
            smallest = min(amount for _, amount in slot_amounts)
            supply = fits = 0
            for provider in providers:
                free = room(provider, rc)
                supply += free
                fits += free // smallest
            if demand > supply or len(slot_amounts) > fits:
                return False
        if self.isolate_slots:
            lists = [options[index] for index in self.isolate_slots]
            if len(_union(set(providers) for providers in lists)) < len(lists):
                return False
            if not _has_matching(lists):
                return False
        return True

    # -- enumeration ------------------------------------------------------------

    def anchor_candidates(self, anchor: int) -> Iterator[tuple[int, ...]]:
        """Every valid candidate built around ``anchor``, lazily (small answers eagerly)."""
        options = [by_anchor[anchor] for by_anchor in self.options]
        if self.simple and all(len(providers) == 1 for providers in options):
            choice = tuple(providers[0] for providers in options)
            if self._any_of_ok(choice[:self.n_unsuffixed]) and self._unique(choice):
                return iter((choice,))
            return iter(())
        if self.product_ok and product_size(options) <= SMALL_PRODUCT:
            return iter(product_candidates(
                options, self.n_unsuffixed, self._any_of_ok, self.subtrees,
                self.geometry.lowest_common_ancestor, self._unique))
        return self._searched(options)

    def _searched(self, options: list[list[int]]) -> Iterator[tuple[int, ...]]:
        if self._feasible(options):
            yield from self._search(options)

    def _any_of_ok(self, providers: Iterable[int]) -> bool:
        """The unsuffixed group's any-of trait sets, on the union of its providers."""
        if not self.unsuffixed_any_of:
            return True
        providers = tuple(providers)
        meets_all = self._meets_all
        if any(provider in meets_all for provider in providers):
            return True  # one provider alone has them all
        traits_of = self.snapshot.traits_of
        traits = _union(traits_of(provider) for provider in providers)
        return all(not traits.isdisjoint(any_of) for any_of in self.unsuffixed_any_of)

    def _unique(self, choice: tuple[int, ...]) -> bool:
        """Dedupe: only candidates made of sharing providers alone can repeat."""
        sharing = self.snapshot.sharing
        if not sharing or not all(provider in sharing for provider in choice):
            return True
        if choice in self._seen:
            return False
        self._seen.add(choice)
        return True

    def _search(self, options: list[list[int]]) -> Iterator[tuple[int, ...]]:
        """Depth-first search over slots, checking constraints on every prefix."""
        n = len(options)
        n_unsuffixed = self.n_unsuffixed
        order = search_order(options, n_unsuffixed)
        slots = self.slots
        room = self.snapshot.room
        root_of = self.snapshot.root_of
        shared = self.shared_classes
        isolate = set(self.isolate_slots)
        legacy = self.legacy
        subtrees_of = self.subtrees_of
        choice: list = [None] * n
        assigned = [False] * n
        load: dict[tuple[int, int], int] = {}
        in_isolation: set[int] = set()
        provider_uses: dict[int, int] = {}
        root_uses: dict[int, int] = {}

        def undo(index: int, provider: int) -> None:
            slot = slots[index]
            assigned[index] = False
            if index in isolate:
                in_isolation.discard(provider)
            for rc, amount in slot.amounts:
                if rc in shared:
                    load[(provider, rc)] -= amount
            if legacy and slot.amounts:
                provider_uses[provider] -= 1
                if not provider_uses[provider]:
                    root_uses[root_of[provider]] -= 1

        def place(index: int, provider: int, depth: int) -> bool:
            slot = slots[index]
            if index in isolate and provider in in_isolation:
                return False
            for rc, amount in slot.amounts:
                if rc in shared and load.get((provider, rc), 0) + amount > room(provider, rc):
                    return False
            if legacy and slot.amounts and not provider_uses.get(provider) \
                    and root_uses.get(root_of[provider]):
                return False
            # apply, then the checks that look at the whole prefix
            choice[index] = provider
            assigned[index] = True
            if index in isolate:
                in_isolation.add(provider)
            for rc, amount in slot.amounts:
                if rc in shared:
                    load[(provider, rc)] = load.get((provider, rc), 0) + amount
            if legacy and slot.amounts:
                uses = provider_uses.get(provider, 0)
                provider_uses[provider] = uses + 1
                if not uses:
                    root = root_of[provider]
                    root_uses[root] = root_uses.get(root, 0) + 1
            ok = True
            if depth == n_unsuffixed - 1:
                ok = self._any_of_ok(choice[:n_unsuffixed])
            if ok:
                for members in subtrees_of.get(index, ()):
                    if not self.geometry.still_possible(members, choice, assigned, options):
                        ok = False
                        break
            if not ok:
                undo(index, provider)
            return ok

        positions = [0] * n
        depth = 0
        while depth >= 0:
            index = order[depth]
            providers = options[index]
            position = positions[depth]
            placed = None
            while position < len(providers):
                provider = providers[position]
                position += 1
                if place(index, provider, depth):
                    placed = provider
                    break
            if placed is None:
                positions[depth] = 0
                depth -= 1
                if depth >= 0:
                    undo(order[depth], choice[order[depth]])
                continue
            positions[depth] = position
            if depth == n - 1:
                candidate = tuple(choice)
                if self._unique(candidate):
                    yield candidate
                undo(index, placed)
            else:
                depth += 1

    def generate(self, strategy: str = BREADTH_FIRST) -> Iterator[tuple[int, ...]]:
        """All candidates: one anchor after the other, or round-robin over anchors."""
        if self.flat:
            width = len(self.slots)
            for anchor in self.anchors:
                yield (anchor,) * width
            return
        if strategy == DEPTH_FIRST:
            for anchor in self.anchors:
                yield from self.anchor_candidates(anchor)
            return
        active: collections.deque = collections.deque()
        options = self.options
        n_unsuffixed = self.n_unsuffixed
        forced_ok = self.simple and not self.snapshot.sharing
        for anchor in self.anchors:
            if forced_ok:
                choice = [by_anchor[anchor] for by_anchor in options]
                if all(len(providers) == 1 for providers in choice):
                    # one option per slot and nothing tying slots together
                    candidate = tuple(providers[0] for providers in choice)
                    if self._any_of_ok(candidate[:n_unsuffixed]):
                        yield candidate
                    continue
            generator = self.anchor_candidates(anchor)
            candidate = next(generator, None)
            if candidate is not None:
                yield candidate
                active.append(generator)
        while active:
            generator = active.popleft()
            candidate = next(generator, None)
            if candidate is not None:
                yield candidate
                active.append(generator)


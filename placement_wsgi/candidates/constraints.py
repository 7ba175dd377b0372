"""What ties the slots of one candidate together, derived once per request.

Each slot's options already meet the slot's own conditions; what remains
are the conditions on a whole candidate:

* **sums**: a class asked for by several slots must fit, summed, on a
  provider that serves more than one of them;
* **isolate** (``group_policy=isolate``): suffixed groups on distinct providers;
* **one provider per tree** (before 1.29 on a deployment with trees): a
  candidate may not use two providers of one tree;
* **same_subtree**: the providers of the listed groups have a lowest common
  ancestor among themselves;
* **any-of** of the unsuffixed group: met by the union of its providers;
* **dedupe**: candidates made only of sharing providers can be found from
  several anchors and are reported once.

The named predicates say which enumeration shortcuts a request allows.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Iterable

from placement_wsgi.candidates.options import Slot
from placement_wsgi.candidates.resolved import ResolvedRequest
from placement_wsgi.candidates.sets import has_matching, meeting_every_group, union
from placement_wsgi.candidates.snapshot import Snapshot
from placement_wsgi.candidates.subtree import TreeGeometry


class Constraints:
    """The cross-slot conditions of one request (see the module docstring)."""

    def __init__(self, resolved: ResolvedRequest, snapshot: Snapshot, slots: list[Slot],
                 unsuffixed_any_of: tuple[frozenset[int], ...]) -> None:
        request = resolved.request
        self.snapshot = snapshot
        uses: dict[int, list[tuple[int, int]]] = collections.defaultdict(list)
        for index, slot in enumerate(slots):
            for rc, amount in slot.amounts:
                uses[rc].append((index, amount))
        #: classes asked for by more than one slot: only they need sums checked
        self.shared_classes = {rc: slot_amounts for rc, slot_amounts in uses.items()
                               if len(slot_amounts) > 1}
        granular = [index for index, slot in enumerate(slots) if slot.granular]
        #: slots that must each have a provider of their own
        self.isolated = granular if request.isolate and len(granular) > 1 else []
        #: the pre-1.29 rule: at most one provider of each tree per candidate
        self.one_provider_per_tree = not request.nested_aware and snapshot.has_trees
        by_suffix = {resolved.groups[slot.group].suffix: index
                     for index, slot in enumerate(slots) if slot.granular}
        #: slot indexes of each same_subtree with at least two known groups
        self.subtrees: list[list[int]] = []
        for suffixes in request.same_subtrees:
            members = sorted({by_suffix[suffix] for suffix in suffixes if suffix in by_suffix})
            if len(members) > 1:
                self.subtrees.append(members)
        self.subtrees_of: dict[int, list[list[int]]] = collections.defaultdict(list)
        for members in self.subtrees:
            for index in members:
                self.subtrees_of[index].append(members)
        self.geometry = TreeGeometry(snapshot.parent_of, snapshot.root_of)
        self.unsuffixed_any_of = unsuffixed_any_of
        self._meets_all = meeting_every_group(snapshot.trait_holders, unsuffixed_any_of) \
            or set()
        self._seen: set[tuple[int, ...]] = set()

    # -- which shortcuts the request allows ------------------------------------------

    @functools.cached_property
    def checked_per_candidate(self) -> bool:
        """Only any-of and same_subtree tie slots: both can be judged on a whole
        combination, so a small product of options needs no search."""
        return not (self.shared_classes or self.isolated or self.one_provider_per_tree)

    @functools.cached_property
    def slots_independent(self) -> bool:
        """Nothing but the any-of ties slots: with one option per slot, that
        choice is the anchor's only possible candidate."""
        return self.checked_per_candidate and not self.subtrees

    @functools.cached_property
    def lone_choice_final(self) -> bool:
        """:attr:`slots_independent` and no sharing providers (so no dedupe): a
        lone choice passing the any-of check is a candidate as it is."""
        return self.slots_independent and not self.snapshot.sharing

    # -- checks ---------------------------------------------------------------------

    def feasible(self, options: list[list[int]]) -> bool:
        """Necessary conditions; False means the tree cannot hold the request
        (total free capacity per shared class against total demand, enough
        providers and a matching for the isolated slots)."""
        room = self.snapshot.room
        for rc, slot_amounts in self.shared_classes.items():
            providers = union(set(options[index]) for index, _ in slot_amounts)
            demand = sum(amount for _, amount in slot_amounts)
            smallest = min(amount for _, amount in slot_amounts)
            supply = fits = 0
            for provider in providers:
                free = room(provider, rc)
                supply += free
                fits += free // smallest
            if demand > supply or len(slot_amounts) > fits:
                return False
        if self.isolated:
            lists = [options[index] for index in self.isolated]
            if len(union(set(providers) for providers in lists)) < len(lists):
                return False
            if not has_matching(lists):
                return False
        return True

    def any_of_ok(self, providers: Iterable[int]) -> bool:
        """The unsuffixed group's any-of trait sets, on the union of its providers."""
        if not self.unsuffixed_any_of:
            return True
        providers = tuple(providers)
        meets_all = self._meets_all
        if any(provider in meets_all for provider in providers):
            return True  # one provider alone has them all
        traits_of = self.snapshot.traits_of
        traits = union(traits_of(provider) for provider in providers)
        return all(not traits.isdisjoint(any_of) for any_of in self.unsuffixed_any_of)

    def first_time(self, choice: tuple[int, ...]) -> bool:
        """Dedupe: only candidates made of sharing providers alone can repeat."""
        sharing = self.snapshot.sharing
        if not sharing or not all(provider in sharing for provider in choice):
            return True
        if choice in self._seen:
            return False
        self._seen.add(choice)
        return True

"""Allocation candidates from a :class:`~.snapshot.Snapshot`: anchors to candidates.

A **candidate** is a tuple with one provider id per slot (in slot order;
see :mod:`.options`). Two candidates are the same allocation request with
the same mappings exactly when their tuples are equal, so the tuple is also
the dedupe key.

Per anchor, the cheapest enumeration the request's :class:`~.constraints.Constraints`
allow is used: a lone choice when every slot has one option, a filtered
product when the options multiply to a handful (:mod:`.product`), else the
depth-first :func:`~.search.search` after cheap necessary conditions
(:meth:`~.constraints.Constraints.feasible`) skipped the trees that cannot
hold the request at all. Anchors are visited depth-first or round-robin
(breadth-first); the caller stops the generator once it has enough.

:attr:`Plan.counts` tells, per request, why anchors gave nothing (for the
debug log): counters per anchor and per slot, never per candidate.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Iterator

from placement_wsgi.candidates.constraints import Constraints
from placement_wsgi.candidates.options import Slot, TreeLoader, build_options
from placement_wsgi.candidates.product import SMALL_PRODUCT, product_candidates, product_size
from placement_wsgi.candidates.resolved import ResolvedRequest
from placement_wsgi.candidates.search import search
from placement_wsgi.candidates.snapshot import Snapshot


class Strategy(enum.StrEnum):
    """``[placement] allocation_candidates_generation_strategy``."""

    BREADTH_FIRST = "breadth-first"
    DEPTH_FIRST = "depth-first"


BREADTH_FIRST = Strategy.BREADTH_FIRST
DEPTH_FIRST = Strategy.DEPTH_FIRST


class Plan:
    """The options of every slot and the constraints that tie them, for one request."""

    def __init__(self, resolved: ResolvedRequest, snapshot: Snapshot,
                 load_trees: TreeLoader | None = None) -> None:
        self.resolved = resolved
        self.snapshot = snapshot
        found = build_options(resolved, snapshot, load_trees)
        self.slots: list[Slot] = found.slots
        self.options = found.options
        self.anchors = found.anchors
        self.n_unsuffixed = found.n_unsuffixed
        self.alone = found.alone
        self.constraints = Constraints(resolved, snapshot, found.slots,
                                       found.unsuffixed_any_of)
        #: why anchors gave nothing: counters for the request's debug log
        self.counts: collections.Counter[str] = collections.Counter()
        self.counts["viable anchors"] = len(self.anchors)
        for index, count in enumerate(found.anchors_per_slot()):
            self.counts[f"slot {index}: anchors with options"] = count

    def anchor_candidates(self, anchor: int) -> Iterator[tuple[int, ...]]:
        """Every valid candidate built around ``anchor``, lazily (small answers eagerly)."""
        constraints = self.constraints
        options = [by_anchor[anchor] for by_anchor in self.options]
        if constraints.slots_independent and all(len(providers) == 1 for providers in options):
            choice = tuple(providers[0] for providers in options)
            if constraints.any_of_ok(choice[:self.n_unsuffixed]) \
                    and constraints.first_time(choice):
                return iter((choice,))
            return iter(())
        if constraints.checked_per_candidate and product_size(options) <= SMALL_PRODUCT:
            return iter(product_candidates(
                options, self.n_unsuffixed, constraints.any_of_ok, constraints.subtrees,
                constraints.geometry.lowest_common_ancestor, constraints.first_time))
        return self._searched(options)

    def _searched(self, options: list[list[int]]) -> Iterator[tuple[int, ...]]:
        if not self.constraints.feasible(options):
            self.counts["anchors infeasible (sums or isolate)"] += 1
            return
        yield from search(self.slots, options, self.constraints, self.n_unsuffixed)

    def generate(self, strategy: str = BREADTH_FIRST) -> Iterator[tuple[int, ...]]:
        """All candidates: one anchor after the other, or round-robin over anchors."""
        counts = self.counts
        if self.alone:
            width = len(self.slots)
            for anchor in self.anchors:
                yield (anchor,) * width
            return
        if strategy == DEPTH_FIRST:
            for anchor in self.anchors:
                empty = True
                for candidate in self.anchor_candidates(anchor):
                    empty = False
                    yield candidate
                if empty:
                    counts["anchors without a candidate"] += 1
            return
        active: collections.deque = collections.deque()
        options = self.options
        n_unsuffixed = self.n_unsuffixed
        constraints = self.constraints
        lone_choice_final = constraints.lone_choice_final
        for anchor in self.anchors:
            if lone_choice_final:
                choice = [by_anchor[anchor] for by_anchor in options]
                if all(len(providers) == 1 for providers in choice):
                    # one option per slot and nothing tying slots together
                    candidate = tuple(providers[0] for providers in choice)
                    if constraints.any_of_ok(candidate[:n_unsuffixed]):
                        yield candidate
                    else:
                        counts["anchors failing any-of"] += 1
                    continue
            generator = self.anchor_candidates(anchor)
            candidate = next(generator, None)
            if candidate is not None:
                yield candidate
                active.append(generator)
            else:
                counts["anchors without a candidate"] += 1
        while active:
            generator = active.popleft()
            candidate = next(generator, None)
            if candidate is not None:
                yield candidate
                active.append(generator)

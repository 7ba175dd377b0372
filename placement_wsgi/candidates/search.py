"""Depth-first search for the candidates of one anchor.

The search assigns one provider per slot, in :func:`~.product.search_order`,
and checks every constraint on the partial assignment (the *prefix*), so an
impossible prefix is never extended. :class:`Prefix` holds the assignment
and the bookkeeping its checks need; :meth:`Prefix.place` and
:meth:`Prefix.undo` are exact inverses.
"""

from __future__ import annotations

from collections.abc import Iterator

from placement_wsgi.candidates.constraints import Constraints
from placement_wsgi.candidates.options import Slot
from placement_wsgi.candidates.product import search_order


class Prefix:
    """A partial candidate: which slots have which provider, and what that uses.

    ``load[(provider, rc)]`` is what the assigned slots put on a provider of
    a class several slots ask for; ``isolated`` the providers taken by
    isolated slots; ``provider_uses``/``root_uses`` count, for the
    one-provider-per-tree rule, the slots each provider serves and the
    providers used in each tree.
    """

    def __init__(self, slots: list[Slot], options: list[list[int]],
                 constraints: Constraints, n_unsuffixed: int) -> None:
        self.slots = slots
        self.options = options
        self.constraints = constraints
        self.n_unsuffixed = n_unsuffixed
        self.room = constraints.snapshot.room
        self.root_of = constraints.snapshot.root_of
        self.shared = constraints.shared_classes
        self.isolate = set(constraints.isolated)
        self.per_tree = constraints.one_provider_per_tree
        n = len(options)
        self.choice: list = [None] * n
        self.assigned = [False] * n
        self.load: dict[tuple[int, int], int] = {}
        self.isolated: set[int] = set()
        self.provider_uses: dict[int, int] = {}
        self.root_uses: dict[int, int] = {}

    def _fits(self, index: int, provider: int) -> bool:
        """The checks that need nothing but the slot and what is placed already."""
        if index in self.isolate and provider in self.isolated:
            return False
        amounts = self.slots[index].amounts
        for rc, amount in amounts:
            if rc in self.shared and self.load.get((provider, rc), 0) + amount \
                    > self.room(provider, rc):
                return False
        return not (self.per_tree and amounts and not self.provider_uses.get(provider)
                    and self.root_uses.get(self.root_of[provider]))

    def place(self, index: int, provider: int, depth: int) -> bool:
        """Assign ``provider`` to slot ``index`` (the ``depth``-th in search order)
        if the prefix stays possible; False (and nothing changed) otherwise."""
        if not self._fits(index, provider):
            return False
        amounts = self.slots[index].amounts
        self.choice[index] = provider
        self.assigned[index] = True
        if index in self.isolate:
            self.isolated.add(provider)
        for rc, amount in amounts:
            if rc in self.shared:
                self.load[(provider, rc)] = self.load.get((provider, rc), 0) + amount
        if self.per_tree and amounts:
            uses = self.provider_uses.get(provider, 0)
            self.provider_uses[provider] = uses + 1
            if not uses:
                root = self.root_of[provider]
                self.root_uses[root] = self.root_uses.get(root, 0) + 1
        # the checks that look at the whole prefix
        constraints = self.constraints
        ok = True
        if depth == self.n_unsuffixed - 1:
            ok = constraints.any_of_ok(self.choice[:self.n_unsuffixed])
        if ok:
            for members in constraints.subtrees_of.get(index, ()):
                if not constraints.geometry.still_possible(
                        members, self.choice, self.assigned, self.options):
                    ok = False
                    break
        if not ok:
            self.undo(index, provider)
        return ok

    def undo(self, index: int, provider: int) -> None:
        """Take ``provider`` off slot ``index`` (the inverse of a successful place)."""
        amounts = self.slots[index].amounts
        self.assigned[index] = False
        if index in self.isolate:
            self.isolated.discard(provider)
        for rc, amount in amounts:
            if rc in self.shared:
                self.load[(provider, rc)] -= amount
        if self.per_tree and amounts:
            self.provider_uses[provider] -= 1
            if not self.provider_uses[provider]:
                self.root_uses[self.root_of[provider]] -= 1


def search(slots: list[Slot], options: list[list[int]], constraints: Constraints,
           n_unsuffixed: int) -> Iterator[tuple[int, ...]]:
    """Every candidate (one provider per slot, slot order) over ``options``, lazily."""
    n = len(options)
    order = search_order(options, n_unsuffixed)
    prefix = Prefix(slots, options, constraints, n_unsuffixed)
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
            if prefix.place(index, provider, depth):
                placed = provider
                break
        if placed is None:
            positions[depth] = 0
            depth -= 1
            if depth >= 0:
                prefix.undo(order[depth], prefix.choice[order[depth]])
            continue
        positions[depth] = position
        if depth == n - 1:
            candidate = tuple(prefix.choice)
            if constraints.first_time(candidate):
                yield candidate
            prefix.undo(index, placed)
        else:
            depth += 1

"""Tree geometry for ``same_subtree``: depths and lowest common ancestors."""

from __future__ import annotations

from collections.abc import Mapping


class TreeGeometry:
    """Depths (memoised) and lowest common ancestors over a snapshot's parent links."""

    def __init__(self, parent_of: Mapping[int, int | None], root_of: Mapping[int, int]) -> None:
        self.parent_of = parent_of
        self.root_of = root_of
        self._depth: dict[int, int] = {}

    def depth_of(self, provider: int) -> int:
        """Edges from ``provider`` up to its root (0 for a root), memoised for
        the whole path walked (one loop, no recursion: thousands per request)."""
        depths = self._depth
        depth = depths.get(provider)
        if depth is not None:
            return depth
        path = []
        node: int | None = provider
        depth = -1
        while node is not None:
            known = depths.get(node)
            if known is not None:
                depth = known
                break
            path.append(node)
            node = self.parent_of.get(node)
        for node in reversed(path):
            depth += 1
            depths[node] = depth
        return depth

    def lowest_common_ancestor(self, providers: list[int]) -> int | None:
        """LCA of providers of one tree; None when they are in different trees."""
        # plain loops, no generator: this runs for every combination the
        # product path judges (thousands per request)
        root_of, parent_of, depths = self.root_of, self.parent_of, self._depth
        lowest = providers[0]
        root = root_of[lowest]
        depth_a = depths.get(lowest)
        if depth_a is None:
            depth_a = self.depth_of(lowest)
        for provider in providers[1:]:
            if root_of[provider] != root:
                return None
            a, b = lowest, provider
            depth_b = depths.get(b)
            if depth_b is None:
                depth_b = self.depth_of(b)
            while depth_a > depth_b:
                a, depth_a = parent_of[a], depth_a - 1
            while depth_b > depth_a:
                b, depth_b = parent_of[b], depth_b - 1
            while a != b:
                a, b = parent_of[a], parent_of[b]
                depth_a -= 1
            lowest = a
        return lowest

    def still_possible(self, members: list[int], choice: list, assigned: list[bool],
                       options: list[list[int]]) -> bool:
        """``same_subtree`` on a partial assignment: can the final set still work?

        ``members`` are the slots tied together, ``choice``/``assigned`` the
        search's current assignment, ``options`` each slot's providers.
        """
        chosen = [choice[index] for index in members if assigned[index]]
        if len(chosen) < 2:
            return True
        lowest = self.lowest_common_ancestor(chosen)
        if lowest is None:
            return False
        if lowest in chosen:
            return True
        # a slot still open must be able to supply an ancestor-or-self of `lowest`
        chain = set()
        node: int | None = lowest
        while node is not None:
            chain.add(node)
            node = self.parent_of.get(node)
        return any(not chain.isdisjoint(options[index])
                   for index in members if not assigned[index])

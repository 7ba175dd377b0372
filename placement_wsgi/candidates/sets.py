"""Small set helpers of the combination step."""

from __future__ import annotations

from collections.abc import Iterable


def union(sets: Iterable[set[int]]) -> set[int]:
    """The union of ``sets`` (a new set)."""
    result: set[int] = set()
    for members in sets:
        result |= members
    return result


def has_matching(options: list[list[int]]) -> bool:
    """Can every slot get a provider of its own (bipartite matching, augmenting paths)?"""
    owner: dict[int, int] = {}

    def assign(index: int, visited: set[int]) -> bool:
        for provider in options[index]:
            if provider in visited:
                continue
            visited.add(provider)
            if provider not in owner or assign(owner[provider], visited):
                owner[provider] = index
                return True
        return False

    return all(assign(index, set()) for index in range(len(options)))

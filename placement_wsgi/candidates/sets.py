"""Small set helpers of the combination step."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

K = TypeVar("K")
_NONE: frozenset[int] = frozenset()


def union(sets: Iterable[set[int]]) -> set[int]:
    """The union of ``sets`` (a new set)."""
    result: set[int] = set()
    for members in sets:
        result |= members
    return result


def meeting_every_group(index: Mapping[K, set[int]], groups: Iterable[Iterable[K]]
                        ) -> set[int] | None:
    """Members of at least one ``index`` entry of every group (None: no groups).

    ``index`` maps a key (trait id, aggregate uuid) to its providers; a key
    missing from it has none.
    """
    result: set[int] | None = None
    for keys in groups:
        members = union(index.get(key, _NONE) for key in keys)
        result = members if result is None else result & members
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

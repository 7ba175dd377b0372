"""Small per-anchor answers as a filtered cartesian product.

The depth-first search of :mod:`.search` pays for its pruning with a fixed
cost per anchor (bookkeeping per placement). When the only
constraints tying slots together are the unsuffixed group's any-of traits and
``same_subtree`` (no sums to check, no ``isolate``, no pre-1.29 one-provider-
per-tree rule) and an anchor's options multiply to a handful of
combinations, enumerating the product and checking each full combination is
several times cheaper, and yields the same candidates in the same order: the
search visits combinations in exactly this lexicographic order and its prefix
checks only prune combinations that the final checks reject too.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Iterable

#: at most this many combinations per anchor go through the product path
SMALL_PRODUCT = 64


def search_order(options: list[list[int]], n_unsuffixed: int) -> list[int]:
    """Slot visiting order: unsuffixed classes first (their any-of check closes
    early), each part with the slots having the fewest options first."""
    n = len(options)
    return sorted(range(n_unsuffixed), key=lambda index: len(options[index])) + sorted(
        range(n_unsuffixed, n), key=lambda index: len(options[index]))


def _same(combination: tuple[int, ...]) -> tuple[int, ...]:
    return combination


@functools.lru_cache(maxsize=256)
def _orders(lengths: tuple[int, ...], n_unsuffixed: int
            ) -> tuple[tuple[int, ...], Callable[[tuple[int, ...]], tuple[int, ...]]]:
    """:func:`search_order` for options of these lengths, and the function that puts a
    combination taken in that order back in slot order (the same for every anchor
    whose options have the same lengths: computed once)."""
    order = search_order([[0] * length for length in lengths], n_unsuffixed)
    position = [0] * len(lengths)
    for place, index in enumerate(order):
        position[index] = place
    return tuple(order), (_same if len(lengths) == 1 else operator.itemgetter(*position))


def product_size(options: list[list[int]]) -> int:
    """Number of combinations, stopping early once past :data:`SMALL_PRODUCT`."""
    size = 1
    for providers in options:
        size *= len(providers)
        if size > SMALL_PRODUCT:
            break
    return size


def product_candidates(options: list[list[int]], n_unsuffixed: int,
                       any_of_ok: Callable[[Iterable[int]], bool],
                       subtrees: list[list[int]],
                       lowest_common_ancestor: Callable[[list[int]], int | None],
                       unique: Callable[[tuple[int, ...]], bool]) -> list[tuple[int, ...]]:
    """Every combination of ``options`` (slot order) that passes the final checks.

    ``any_of_ok`` judges the unsuffixed slots' providers, ``subtrees`` lists the
    slot indexes of each ``same_subtree`` (their providers' lowest common
    ancestor must be one of them), ``unique`` is the sharing dedupe.
    """
    order, reorder = _orders(tuple(map(len, options)), n_unsuffixed)
    judged: dict[tuple[int, ...], bool] = {}
    found = []
    for combination in itertools.product(*[options[index] for index in order]):
        candidate = reorder(combination)
        if n_unsuffixed:
            unsuffixed = candidate[:n_unsuffixed]
            ok = judged.get(unsuffixed)
            if ok is None:
                ok = judged[unsuffixed] = any_of_ok(unsuffixed)
            if not ok:
                continue
        for members in subtrees:
            chosen = [candidate[index] for index in members]
            if lowest_common_ancestor(chosen) not in chosen:
                break
        else:
            if unique(candidate):
                found.append(candidate)
    return found

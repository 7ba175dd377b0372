"""Where each provider of a tree is drawn: boxes in rows by depth, parents over their children.

The browser only draws what this module placed (rectangles, lines and
text at the given coordinates), so the geometry is computed and tested
here. Each leaf takes the next place to the right; a parent is centred over
its first and last child (and pushes what follows right when it is wider
than they are). A box is as tall as its lines of text and as wide as the
longest one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

#: Width of a character of the boxes' monospace text, the narrowest box, line height,
#: padding and gaps, in SVG user units.
CHAR_WIDTH = 7
MIN_WIDTH = 120
LINE_HEIGHT = 14
PADDING = 6
COLUMN_GAP = 16
ROW_GAP = 28


class Placed(NamedTuple):
    """What to place: a provider, its parent (None: the root), its number of lines of
    text and the length of the longest."""

    uuid: str
    parent: str | None
    lines: int
    chars: int


class Box(NamedTuple):
    uuid: str
    x: int
    y: int
    width: int
    height: int


class Edge(NamedTuple):
    """From the bottom middle of the parent's box to the top middle of the child's."""

    x1: int
    y1: int
    x2: int
    y2: int


class Layout(NamedTuple):
    width: int
    height: int
    boxes: list[Box]
    edges: list[Edge]


def box_height(lines: int) -> int:
    return 2 * PADDING + max(1, lines) * LINE_HEIGHT


def box_width(chars: int) -> int:
    return max(MIN_WIDTH, 2 * PADDING + chars * CHAR_WIDTH)


def layout(providers: Sequence[Placed]) -> Layout:
    """The boxes and edges of ``providers`` (a parent before its children; every
    provider whose parent is absent is drawn as a root)."""
    known = {provider.uuid for provider in providers}
    children: dict[str | None, list[Placed]] = {}
    for provider in providers:
        parent = provider.parent if provider.parent in known else None
        children.setdefault(parent, []).append(provider)
    row_height: dict[int, int] = {}
    centre: dict[str, float] = {}
    depth_of: dict[str, int] = {}
    cursor = [0.0]  # where the next leaf's box starts

    def place(provider: Placed, depth: int) -> float:
        depth_of[provider.uuid] = depth
        row_height[depth] = max(row_height.get(depth, 0), box_height(provider.lines))
        half = box_width(provider.chars) / 2
        kids = children.get(provider.uuid, [])
        if kids:
            spots = [place(kid, depth + 1) for kid in kids]
            centre[provider.uuid] = (spots[0] + spots[-1]) / 2
            cursor[0] = max(cursor[0], centre[provider.uuid] + half + COLUMN_GAP)
        else:
            centre[provider.uuid] = cursor[0] + half
            cursor[0] += 2 * half + COLUMN_GAP
        return centre[provider.uuid]

    for root in children.get(None, []):
        place(root, 0)
    left = min((centre[p.uuid] - box_width(p.chars) / 2 for p in providers), default=0.0)
    row_top = [0]
    for depth in range(1, len(row_height)):
        row_top.append(row_top[-1] + row_height[depth - 1] + ROW_GAP)
    boxes = {p.uuid: Box(p.uuid, round(centre[p.uuid] - box_width(p.chars) / 2 - left),
                         row_top[depth_of[p.uuid]], box_width(p.chars), box_height(p.lines))
             for p in providers}
    edges = [Edge(round(centre[parent] - left), boxes[parent].y + boxes[parent].height,
                  round(centre[kid.uuid] - left), boxes[kid.uuid].y)
             for parent, kids in children.items() if parent is not None for kid in kids]
    width = max((box.x + box.width for box in boxes.values()), default=0)
    height = max((box.y + box.height for box in boxes.values()), default=0)
    return Layout(width, height, [boxes[p.uuid] for p in providers], edges)

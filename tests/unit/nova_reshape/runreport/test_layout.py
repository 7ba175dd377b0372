"""The tree layout: rows by depth, parents over their children, no overlap, boxes fit text."""

from __future__ import annotations

from nova_reshape.runreport import layout
from nova_reshape.runreport.layout import Placed


def _by_uuid(placed):
    return {box.uuid: box for box in placed.boxes}


def test_a_lone_root_is_one_box_at_the_origin():
    placed = layout.layout([Placed("r", None, 3, 10)])
    (box,) = placed.boxes
    assert (box.x, box.y) == (0, 0)
    assert box.width == layout.MIN_WIDTH
    assert box.height == 2 * layout.PADDING + 3 * layout.LINE_HEIGHT
    assert (placed.width, placed.height) == (box.width, box.height)
    assert placed.edges == []


def test_children_in_a_row_below_their_parent_centred_over_them():
    placed = layout.layout([Placed("r", None, 4, 20), Placed("a", "r", 2, 20),
                            Placed("b", "r", 1, 40), Placed("c", "r", 2, 20)])
    boxes = _by_uuid(placed)
    root, a, b, c = boxes["r"], boxes["a"], boxes["b"], boxes["c"]
    assert a.y == b.y == c.y == root.height + layout.ROW_GAP
    assert a.x + a.width + layout.COLUMN_GAP == b.x
    assert b.x + b.width + layout.COLUMN_GAP == c.x
    assert b.width == 2 * layout.PADDING + 40 * layout.CHAR_WIDTH
    middle = (a.x + a.width / 2 + c.x + c.width / 2) / 2
    assert abs(root.x + root.width / 2 - middle) <= 1
    assert [(e.x1, e.y1) for e in placed.edges] == [(round(middle), root.height)] * 3
    assert sorted(e.y2 for e in placed.edges) == [a.y] * 3
    assert placed.width == c.x + c.width
    assert placed.height == a.y + a.height  # the row is as tall as its tallest box


def test_a_wide_parent_never_overlaps_what_follows_and_nothing_is_left_of_zero():
    placed = layout.layout([Placed("r", None, 1, 5), Placed("wide", "r", 1, 80),
                            Placed("kid", "wide", 1, 5), Placed("next", "r", 1, 5)])
    boxes = _by_uuid(placed)
    assert min(box.x for box in boxes.values()) == 0
    assert boxes["wide"].x + boxes["wide"].width <= boxes["next"].x
    assert boxes["kid"].y > boxes["wide"].y > boxes["r"].y


def test_a_provider_whose_parent_is_missing_is_drawn_as_a_root():
    placed = layout.layout([Placed("r", None, 1, 5), Placed("orphan", "gone", 1, 5)])
    boxes = _by_uuid(placed)
    assert boxes["orphan"].y == boxes["r"].y == 0
    assert boxes["orphan"].x > boxes["r"].x

"""dumps_indented writes what json.dumps(value, indent=2, sort_keys=True) writes."""

from __future__ import annotations

import enum
import json

import pytest

from nova_reshape.cmd.indented_json import dumps_indented


class Status(enum.StrEnum):
    DONE = "done"


class Count(enum.IntEnum):
    TWO = 2


VALUES = [
    None, True, False, 0, -7, 10**20, 1.5, -0.0, 1e300, float("nan"), float("inf"),
    float("-inf"), "", "plain", 'quote " and \\ backslash', "line\nbreak\ttab\x1c",
    "non-ASCII été \u2028 \U0001f600", Status.DONE, Count.TWO, [], {}, (), [[]], [{}],
    (1, "a", None), {"b": 1, "a": [1, 2, {"z": {}, "y": []}]},
    {"nested": {"deeper": {"deepest": [1, [2, [3, {"k": "v"}]]]}}},
    {Status.DONE: 1, "cancelled": 2},
    {1: "int", 2.5: "float"}, {True: "t"}, {None: "null"},
    {"moves": [{"consumer": "c", "from": "a", "to": "b", "resources": {"VGPU": 1}}],
     "before": None, "after": {"uuid": {"inventory": {"VGPU": {"total": 16}}}}},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_same_text_as_the_standard_library(value):
    assert dumps_indented(value) == json.dumps(value, indent=2, sort_keys=True)


def test_a_pad_starts_every_line_after_the_first():
    value = {"a": [1, {"b": None}], "c": "d"}
    assert dumps_indented(value, "    ") == json.dumps(
        value, indent=2, sort_keys=True).replace("\n", "\n    ")


def test_what_json_refuses_is_refused_the_same_way():
    for value in ({1, 2}, {"a": object()}, {(1, 2): "tuple key"}):
        with pytest.raises(TypeError) as expected:
            json.dumps(value, indent=2, sort_keys=True)
        with pytest.raises(TypeError) as ours:
            dumps_indented(value)
        assert str(ours.value) == str(expected.value)
    with pytest.raises(TypeError):
        dumps_indented({"a": 1, 2: "b"})  # keys sorted together, as json does

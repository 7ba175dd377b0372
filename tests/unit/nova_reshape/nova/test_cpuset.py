"""nova's CPU-set syntax: the one parser and its formatter."""

from __future__ import annotations

import pytest

from nova_reshape.nova.cpuset import format_cpuset, parse_cpuset


@pytest.mark.parametrize(("cpus", "text"), [
    ({0, 1, 2, 3, 8}, "0-3,8"), ({5}, "5"), ({1, 3, 5}, "1,3,5"),
    ({0, 1, 4, 5, 6, 10, 11}, "0-1,4-6,10-11"), (set(), ""),
])
def test_format_cpuset(cpus, text):
    assert format_cpuset(cpus) == text
    assert parse_cpuset(text or None) == cpus


def test_parse_cpuset_forms():
    assert format_cpuset(parse_cpuset("0-7,^3")) == "0-2,4-7"
    assert parse_cpuset("0-2, 5") == frozenset({0, 1, 2, 5})
    assert parse_cpuset(3) == frozenset({3})
    assert parse_cpuset([4, 1]) == frozenset({1, 4})
    assert parse_cpuset("0-3,^2,8") == {0, 1, 3, 8}


@pytest.mark.parametrize(("text", "message"), [
    ("0-3,x", "'x' is not a CPU number or range"),
    ("3-1", "range '3-1' runs backwards"),
])
def test_parse_cpuset_refuses(text, message):
    with pytest.raises(ValueError, match=message):
        parse_cpuset(text)

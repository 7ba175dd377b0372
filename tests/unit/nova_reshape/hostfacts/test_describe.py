"""Pieces of describe_host that need no database."""

from __future__ import annotations

import pytest

from nova_reshape.hostfacts.describe import format_cpuset
from nova_reshape.virt.host import parse_cpuset


@pytest.mark.parametrize(("cpus", "text"), [
    ({0, 1, 2, 3, 8}, "0-3,8"), ({5}, "5"), ({1, 3, 5}, "1,3,5"),
    ({0, 1, 4, 5, 6, 10, 11}, "0-1,4-6,10-11"), (set(), ""),
])
def test_format_cpuset(cpus, text):
    assert format_cpuset(cpus) == text
    assert parse_cpuset(text or None) == cpus

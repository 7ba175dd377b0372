"""Host aggregates: immutable records, compared by value."""

from __future__ import annotations

import dataclasses

import pytest

from nova_reshape.nova.aggregate import Aggregate


def test_an_aggregate_is_a_frozen_value():
    aggregate = Aggregate("agg1", frozenset({"cmp-1"}), {"ssd": "true"})
    assert aggregate.uuid is None
    assert aggregate == Aggregate("agg1", frozenset({"cmp-1"}), {"ssd": "true"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        aggregate.name = "agg2"  # type: ignore[misc]


def test_membership_is_by_service_host_name():
    aggregate = Aggregate("agg1", frozenset({"cmp-1", "cmp-2"}), {})
    assert "cmp-2" in aggregate.hosts and "cmp-2.example.org" not in aggregate.hosts

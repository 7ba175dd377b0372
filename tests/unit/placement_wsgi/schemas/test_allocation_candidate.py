"""GET /allocation_candidates query keys per microversion (schemas/allocation_candidate.py)."""

from __future__ import annotations

from placement_wsgi.microversion import Version
from placement_wsgi.schemas import allocation_candidate as ac
from tests.unit.placement_wsgi.schemas.helpers import accepts


def test_one_schema_object_per_version_range():
    assert ac.query_schema(Version(1, 10)) is ac.query_schema(Version(1, 15))
    assert ac.query_schema(Version(1, 36)) is ac.query_schema(Version(1, 39))
    assert ac.query_schema(Version(1, 35)) is not ac.query_schema(Version(1, 36))


def test_granular_groups_numbered_then_named():
    assert not accepts(ac.query_schema(Version(1, 24)), {"resources1": "VCPU:1"}, True)
    assert accepts(ac.query_schema(Version(1, 25)), {"resources1": "VCPU:1"}, True)
    assert not accepts(ac.query_schema(Version(1, 25)), {"resources_A": "VCPU:1"}, True)
    assert accepts(ac.query_schema(Version(1, 33)), {"resources_A": "VCPU:1"}, True)
    assert not accepts(ac.query_schema(Version(1, 33)), {"resources_" + "A" * 65: "VCPU:1"},
                       True)


def test_later_keys_arrive_with_their_versions():
    assert not accepts(ac.query_schema(Version(1, 34)), {"root_required": "X"}, True)
    assert accepts(ac.query_schema(Version(1, 35)), {"root_required": "X"}, True)
    assert not accepts(ac.query_schema(Version(1, 30)), {"in_tree1": "x"}, True)

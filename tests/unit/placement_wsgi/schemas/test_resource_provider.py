"""Resource provider bodies and list queries per microversion."""

from __future__ import annotations

from placement_wsgi.microversion import Version
from placement_wsgi.schemas import resource_provider as rp
from tests.unit.placement_wsgi.schemas.helpers import accepts

PARENT = "5a3a0a58-0c4b-4b5e-9c3a-3f0a6d6c1d2e"


def test_a_parent_from_1_14():
    assert rp.create_schema_for(Version(1, 13)) is rp.CREATE_1_0
    assert not accepts(rp.CREATE_1_0, {"name": "a", "parent_provider_uuid": PARENT})
    assert accepts(rp.create_schema_for(Version(1, 14)), {"name": "a",
                                                          "parent_provider_uuid": None})
    assert accepts(rp.update_schema_for(Version(1, 14)), {"name": "a",
                                                          "parent_provider_uuid": PARENT})
    assert not accepts(rp.update_schema_for(Version(1, 0)), {"name": "a" * 201})


def test_list_query_keys_grow_with_the_version():
    assert rp.list_query_schema_for(Version(1, 2)) is rp.LIST_QUERY_1_0
    assert rp.list_query_schema_for(Version(1, 17)) is rp.LIST_QUERY_1_14
    assert rp.list_query_schema_for(Version(1, 39)) is rp.LIST_QUERY_1_18
    assert not accepts(rp.LIST_QUERY_1_3, {"resources": "VCPU:1"}, True)
    assert accepts(rp.LIST_QUERY_1_4, {"resources": "VCPU:1"}, True)
    assert not accepts(rp.LIST_QUERY_1_14, {"in_tree": "nope"}, True)

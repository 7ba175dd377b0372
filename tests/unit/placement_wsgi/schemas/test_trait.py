"""The trait routes' query and body schemas."""

from __future__ import annotations

from placement_wsgi.schemas import trait
from tests.unit.placement_wsgi.schemas.helpers import accepts


def test_list_query_knows_name_and_associated_only():
    assert accepts(trait.LIST_TRAITS_QUERY, {"name": "in:A,B", "associated": "true"}, True)
    assert not accepts(trait.LIST_TRAITS_QUERY, {"colour": "red"}, True)


def test_provider_traits_need_names_and_the_generation():
    assert accepts(trait.SET_PROVIDER_TRAITS, {"traits": ["CUSTOM_A"],
                                               "resource_provider_generation": 0})
    assert not accepts(trait.SET_PROVIDER_TRAITS, {"traits": [""],
                                                   "resource_provider_generation": 0})
    assert not accepts(trait.SET_PROVIDER_TRAITS, {"traits": ["CUSTOM_A"]})

"""Trait objects on every engine: custom traits, listing, provider traits (objects/trait.py)."""

from __future__ import annotations

import pytest

from placement_wsgi import errors
from placement_wsgi.objects import trait as trait_obj
from tests.fixtures import seed


def test_custom_names():
    assert trait_obj.is_valid_custom_name("CUSTOM_GOLD_1")
    assert not trait_obj.is_valid_custom_name("CUSTOM_gold")
    assert not trait_obj.is_valid_custom_name("HW_CPU_X86_AVX2")
    assert not trait_obj.is_valid_custom_name("CUSTOM_" + "A" * 249)


def test_ensure_creates_once_and_delete_refuses_standard_and_used_traits(database):
    trait, created = trait_obj.ensure_trait(database, "CUSTOM_GOLD")
    assert created and trait.name == "CUSTOM_GOLD"
    again, created = trait_obj.ensure_trait(database, "CUSTOM_GOLD")
    assert not created and again.id == trait.id
    assert trait_obj.get_trait(database, "CUSTOM_GOLD").id == trait.id
    with pytest.raises(errors.NotFound, match=r"No such trait\(s\): CUSTOM_gold."):
        trait_obj.get_trait(database, "CUSTOM_gold")  # exact case on every engine
    with pytest.raises(errors.BadRequest, match="Cannot delete standard trait HW_CPU_X86_AVX2"):
        trait_obj.delete_trait(database, "HW_CPU_X86_AVX2")
    provider = seed.add_provider(database)
    trait_obj.set_provider_traits(database, provider, ["CUSTOM_GOLD"], 0)
    with pytest.raises(errors.Conflict, match="in use by a resource provider"):
        trait_obj.delete_trait(database, "CUSTOM_GOLD")
    trait_obj.delete_provider_traits(database, provider)
    trait_obj.delete_trait(database, "CUSTOM_GOLD")
    with pytest.raises(errors.NotFound):
        trait_obj.delete_trait(database, "CUSTOM_GOLD")


def test_list_by_names_prefix_and_association(database):
    for name in ("CUSTOM_A_1", "CUSTOM_A_2", "CUSTOM_B"):
        trait_obj.ensure_trait(database, name)
    provider = seed.add_provider(database)
    trait_obj.set_provider_traits(database, provider, ["CUSTOM_A_2"], 0)

    def names(**filters) -> list[str]:
        return [trait.name for trait in trait_obj.list_traits(database, **filters)]

    assert names(prefix="CUSTOM_A") == ["CUSTOM_A_1", "CUSTOM_A_2"]
    assert names(prefix="custom_a") == []  # case-sensitive on every engine
    assert names(names=["CUSTOM_B", "CUSTOM_NONE"]) == ["CUSTOM_B"]
    assert names(prefix="CUSTOM_", associated=True) == ["CUSTOM_A_2"]
    assert names(prefix="CUSTOM_", associated=False) == ["CUSTOM_A_1", "CUSTOM_B"]


def test_provider_traits_replace_bump_the_generation_and_check_it(database):
    trait_obj.ensure_trait(database, "CUSTOM_A")
    provider = seed.add_provider(database)
    traits = trait_obj.set_provider_traits(database, provider, ["CUSTOM_A", "HW_CPU_X86_AVX2"], 0)
    assert sorted(traits.names) == ["CUSTOM_A", "HW_CPU_X86_AVX2"] and traits.generation == 1
    with pytest.raises(errors.ConcurrentUpdate):
        trait_obj.set_provider_traits(database, provider, [], 0)
    assert trait_obj.get_provider_traits(database, provider).generation == 1
    trait_obj.delete_provider_traits(database, provider)
    assert trait_obj.get_provider_traits(database, provider).names == []
    assert seed.provider_generation(database, provider) == 2
    trait_obj.delete_provider_traits(database, provider)  # nothing to remove: no bump
    assert seed.provider_generation(database, provider) == 2

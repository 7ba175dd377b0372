"""Custom names a run created are forgotten again once nothing uses them."""

from __future__ import annotations

from nova_reshape.journal import names
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.objects import trait as trait_obj
from tests.functional.nova_reshape.conftest import Seeder


def test_only_the_unused_names_created_since_are_deleted(database, seed: Seeder):
    trait_obj.ensure_trait(database, "CUSTOM_OLD")
    before = database.read(names.custom_names)
    for name in ("CUSTOM_USED", "CUSTOM_FREE"):
        trait_obj.ensure_trait(database, name)
    rc_obj.ensure_resource_class(database, "CUSTOM_FREE_CLASS")
    rc_obj.ensure_resource_class(database, "CUSTOM_HELD")
    rp = seed.provider("cmp")
    seed.traits(rp, ["CUSTOM_USED"])
    seed.inventory(rp, {"CUSTOM_HELD": {"total": 1}})
    assert names.created_since(database, before) == {
        "traits": ["CUSTOM_FREE", "CUSTOM_USED"],
        "resource_classes": ["CUSTOM_FREE_CLASS", "CUSTOM_HELD"], "aggregates": []}
    planned = names.forget_unused(database, before, dry_run=True)
    assert planned == ["trait CUSTOM_FREE", "trait CUSTOM_USED",
                       "resource class CUSTOM_FREE_CLASS", "resource class CUSTOM_HELD"]
    assert database.read(names.custom_names)["traits"] == [
        "CUSTOM_FREE", "CUSTOM_OLD", "CUSTOM_USED"]
    assert names.forget_unused(database, before, dry_run=False) == [
        "trait CUSTOM_FREE", "resource class CUSTOM_FREE_CLASS"]
    assert database.read(names.custom_names) == {
        "traits": ["CUSTOM_OLD", "CUSTOM_USED"], "resource_classes": ["CUSTOM_HELD"],
        "aggregates": []}
    assert names.forget_unused(database, None, dry_run=False) == []


def test_the_unused_aggregates_created_since_are_deleted(database, seed: Seeder):
    old, used, free = (f"a9a9a9a9-0000-4000-8000-00000000000{n}" for n in (1, 2, 3))
    first, second = seed.provider("cmp-1"), seed.provider("cmp-2")
    seed.aggregates(first, [old])
    before = database.read(names.custom_names)
    assert before["aggregates"] == [old]
    seed.aggregates(first, [old, used])
    seed.aggregates(second, [free])
    seed.aggregates(second, [])  # free is in no provider any more
    assert names.forget_unused(database, before, dry_run=True) == [
        f"aggregate {used}", f"aggregate {free}"]
    assert names.forget_unused(database, before, dry_run=False) == [f"aggregate {free}"]
    assert database.read(names.custom_names)["aggregates"] == [old, used]
    # A run recorded before aggregates were kept forgets none.
    legacy = {key: value for key, value in before.items() if key != "aggregates"}
    assert names.forget_unused(database, legacy, dry_run=False) == []

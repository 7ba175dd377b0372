"""Resource class objects on every engine: ids, "in use", name mapping, races."""

from __future__ import annotations

import os_resource_classes
import pytest

from placement_wsgi import errors
from placement_wsgi.objects import resource_class as rc_obj
from tests.fixtures import seed
from tests.fixtures.threads import run_at_once


def test_standard_ids_are_library_indexes(database):
    classes = rc_obj.list_resource_classes(database)
    assert [(rc.id, rc.name) for rc in classes] == list(
        enumerate(os_resource_classes.STANDARDS))
    assert all(rc.is_standard for rc in classes)


def test_custom_ids_start_at_10000_and_follow_the_highest(database):
    first = rc_obj.create_resource_class(database, "CUSTOM_A")
    second, created = rc_obj.ensure_resource_class(database, "CUSTOM_B")
    assert (first.id, second.id, created) == (10000, 10001, True)
    assert not first.is_standard
    rc_obj.delete_resource_class(database, "CUSTOM_B")
    # max(id)+1: a deleted top id is reused, a gap below the top is not filled.
    assert rc_obj.create_resource_class(database, "CUSTOM_C").id == 10001
    rc_obj.delete_resource_class(database, "CUSTOM_A")
    assert rc_obj.create_resource_class(database, "CUSTOM_D").id == 10002


def test_ensure_returns_the_existing_class(database):
    created = rc_obj.create_resource_class(database, "CUSTOM_SAME")
    again, was_created = rc_obj.ensure_resource_class(database, "CUSTOM_SAME")
    assert (again.id, was_created) == (created.id, False)


def test_a_class_with_inventory_cannot_be_deleted(database):
    rc_obj.create_resource_class(database, "CUSTOM_USED")
    provider = seed.add_provider(database)
    seed.add_inventory(database, provider, "CUSTOM_USED", 4)
    with pytest.raises(errors.Conflict) as raised:
        rc_obj.delete_resource_class(database, "CUSTOM_USED")
    assert str(raised.value) == (
        "Error in delete resource class: Cannot delete resource class CUSTOM_USED. "
        "Class is in use in inventory.")
    assert rc_obj.get_resource_class(database, "CUSTOM_USED").name == "CUSTOM_USED"


def test_rename_keeps_the_id(database):
    created = rc_obj.create_resource_class(database, "CUSTOM_OLD")
    renamed = rc_obj.rename_resource_class(database, "CUSTOM_OLD", "CUSTOM_NEW")
    assert (renamed.id, renamed.name) == (created.id, "CUSTOM_NEW")
    with pytest.raises(errors.NotFound):
        rc_obj.get_resource_class(database, "CUSTOM_OLD")


def test_ids_by_name_leaves_unknown_names_out(database):
    custom = rc_obj.create_resource_class(database, "CUSTOM_X")

    def body(connection):
        return (rc_obj.ids_by_name(connection, ["VCPU", "DISK_GB", "CUSTOM_X", "NOPE"]),
                rc_obj.ids_by_name(connection, []),
                rc_obj.names_by_id(connection, [0, custom.id, 99999]))

    by_name, empty, by_id = database.read(body)
    assert by_name == {"VCPU": 0, "DISK_GB": 2, "CUSTOM_X": custom.id}
    assert empty == {}
    assert by_id == {0: "VCPU", custom.id: "CUSTOM_X"}


def test_require_classes_names_the_first_unknown_class(database):
    def body(connection):
        return rc_obj.require_classes(connection, ["VCPU", "CUSTOM_B", "CUSTOM_A"],
                                      prefix="Unable to allocate inventory: ")

    with pytest.raises(errors.BadRequest) as raised:
        database.read(body)
    assert str(raised.value) == "Unable to allocate inventory: No such resource class CUSTOM_B."

    def found(connection):
        return rc_obj.require_classes(connection, ["MEMORY_MB", "VCPU", "VCPU"],
                                      error=errors.NotFound)

    assert database.read(found) == {"MEMORY_MB": 1, "VCPU": 0}


def test_concurrent_creates_of_different_names_get_distinct_ids(database):
    count = 8
    results = run_at_once(
        count, lambda index: rc_obj.create_resource_class(database, f"CUSTOM_RACE_{index}"))
    assert all(isinstance(result, rc_obj.ResourceClass) for result in results), results
    assert sorted(result.id for result in results) == list(range(10000, 10000 + count))


def test_concurrent_creates_of_one_name_make_one_class(database):
    count = 6
    results = run_at_once(
        count, lambda index: rc_obj.ensure_resource_class(database, "CUSTOM_ONE"))
    assert all(isinstance(result, tuple) for result in results), results
    assert sum(created for _, created in results) == 1
    assert {rc.id for rc, _ in results} == {10000}
    posts = run_at_once(
        count, lambda index: rc_obj.create_resource_class(database, "CUSTOM_TWO"))
    assert sum(isinstance(result, rc_obj.ResourceClass) for result in posts) == 1
    conflicts = [result for result in posts if isinstance(result, errors.Conflict)]
    assert len(conflicts) == count - 1


def test_names_are_case_sensitive_on_every_engine(database):
    with pytest.raises(errors.NotFound):
        rc_obj.get_resource_class(database, "vcpu")

    def body(connection):
        return rc_obj.ids_by_name(connection, ["vcpu", "Memory_MB", "DISK_GB"])

    assert database.read(body) == {"DISK_GB": 2}

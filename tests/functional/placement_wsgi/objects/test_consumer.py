"""Consumer records on every engine: owners, generations, deletion (objects/consumer.py)."""

from __future__ import annotations

import pytest

from placement_wsgi import errors
from placement_wsgi.objects import consumer as consumer_obj

UUID = "c0000000-0000-4000-8000-000000000001"


def test_owner_names_get_one_id_each(database):
    def body(connection):
        first = consumer_obj.ensure_projects(connection, ["p1", "p2", "p1"])
        again = consumer_obj.ensure_projects(connection, ["p2", "p3"])
        users = consumer_obj.ensure_users(connection, ["u1"])
        types = consumer_obj.ensure_consumer_types(connection, ["INSTANCE"])
        return first, again, users, types, consumer_obj.ensure_users(connection, [])

    first, again, users, types, nothing = database.write(body)
    assert set(first) == {"p1", "p2"} and again["p2"] == first["p2"]
    assert again["p3"] not in first.values()
    assert set(users) == {"u1"} and set(types) == {"INSTANCE"} and nothing == {}


def test_a_consumer_is_created_found_updated_bumped_and_deleted(database):
    def create(connection):
        project = consumer_obj.ensure_projects(connection, ["p1", "p2"])
        user = consumer_obj.ensure_users(connection, ["u1"])
        created = consumer_obj.create_consumer(connection, UUID, project["p1"], user["u1"], None)
        return created, project

    created, project = database.write(create)
    assert created.created and created.generation == 0

    def change(connection):
        (found,) = consumer_obj.find_consumers(connection, [UUID, UUID]).values()
        consumer_obj.update_owner(connection, found, project["p2"], found.user_id, None, False)
        consumer_obj.bump_generations(connection, [found])
        return found

    changed = database.write(change)
    assert (changed.project_id, changed.generation, changed.created) == (project["p2"], 1, False)
    stored = database.read(lambda c: consumer_obj.find_consumers(c, [UUID])[UUID])
    assert (stored.project_id, stored.generation) == (project["p2"], 1)
    database.write(lambda c: consumer_obj.delete_consumers(
        c, list(consumer_obj.find_consumers(c, [UUID]).values())))
    assert database.read(lambda c: consumer_obj.find_consumers(c, [UUID])) == {}


def test_generation_checks():
    consumer_obj.check_generation(None, None)
    with pytest.raises(errors.ConcurrentUpdate, match="expected null but got 0"):
        consumer_obj.check_generation(None, 0)
    existing = consumer_obj.Consumer(1, UUID, 1, 1, generation=3, consumer_type_id=None)
    consumer_obj.check_generation(existing, 3)
    with pytest.raises(errors.ConcurrentUpdate, match="expected 3 but got None"):
        consumer_obj.check_generation(existing, None)

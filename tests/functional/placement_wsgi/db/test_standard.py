"""Loading the standard traits and resource classes: complete, idempotent (db/standard.py)."""

from __future__ import annotations

import os_resource_classes
import os_traits
import sqlalchemy as sa

from placement_wsgi.db import standard, tables


def names(connection, table) -> set[str]:
    return set(connection.execute(sa.select(table.c.name)).scalars())


def test_a_missing_name_is_put_back_and_nothing_is_doubled(database):
    def reload(connection) -> None:
        connection.execute(
            tables.traits.delete().where(tables.traits.c.name == "HW_CPU_X86_AVX2"))
        standard.sync_standard_names(connection)
        standard.sync_standard_names(connection)

    database.write(reload)
    traits = database.read(lambda connection: names(connection, tables.traits))
    classes = database.read(lambda connection: connection.execute(
        sa.select(tables.resource_classes.c.id, tables.resource_classes.c.name)).all())
    assert set(os_traits.get_traits()) <= traits
    assert {name for _, name in classes} >= set(os_resource_classes.STANDARDS)
    assert len(classes) == len({name for _, name in classes})
    # standard classes keep their index as id, below the first custom id
    assert dict((name, row_id) for row_id, name in classes)["VCPU"] == \
        os_resource_classes.STANDARDS.index("VCPU")
    assert max(row_id for row_id, _ in classes) < standard.FIRST_CUSTOM_RESOURCE_CLASS_ID


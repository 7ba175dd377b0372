"""The one declaration of nova's cell tables: what the reader selects of it."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from nova_reshape.novadb import tables


def names(table: sa.Table) -> set[str]:
    return {column.name for column in tables.read_columns(table)}


def test_reader_skips_columns_marked_unread():
    # compute_id and hidden exist only in newer releases: never selected
    assert {"compute_id", "hidden", "display_name"}.isdisjoint(names(tables.instances))
    # heal_allocations needs the owner, the image and the age of every instance
    assert {"uuid", "host", "node", "vcpus", "deleted", "user_id", "image_ref",
            "created_at"} <= names(tables.instances)
    assert {"compute_id", "hidden"} <= set(tables.instances.c.keys())


def test_services_read_created_at_but_not_other_timestamps():
    assert "created_at" in names(tables.services)
    assert {"updated_at", "deleted_at"}.isdisjoint(names(tables.services))
    assert {"created_at", "updated_at"}.isdisjoint(names(tables.compute_nodes))


def test_enum_column_is_read_as_text_even_for_a_value_nova_adds_later():
    engine = sa.create_engine("sqlite://")
    tables.metadata.create_all(engine, tables=[tables.migrations])
    with engine.begin() as connection:
        connection.execute(sa.text(
            "INSERT INTO migrations (id, migration_type, deleted) "
            "VALUES (1, 'cross-cell-resize', 0)"))
        row = connection.execute(
            sa.select(*tables.read_columns(tables.migrations))).mappings().one()
        assert row["migration_type"] == "cross-cell-resize"
        with pytest.raises(LookupError):
            connection.execute(sa.select(tables.migrations)).one()

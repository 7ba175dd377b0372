"""The declared tables are the schema the migrations build, on every engine (db/tables.py)."""

from __future__ import annotations

import datetime

import sqlalchemy as sa

from placement_wsgi.db import tables


def test_every_declared_table_and_column_exists_after_the_migrations(db_url):
    engine = sa.create_engine(db_url)
    try:
        inspector = sa.inspect(engine)
        migrated = set(inspector.get_table_names()) - {"alembic_version"}
        assert migrated == set(tables.metadata.tables)
        for table in tables.metadata.sorted_tables:
            columns = {column["name"]: column for column in inspector.get_columns(table.name)}
            assert set(columns) == set(table.c.keys()), table.name
            for column in table.c:
                assert columns[column.name]["nullable"] == column.nullable, \
                    f"{table.name}.{column.name}"
    finally:
        engine.dispose()


def test_timestamps_are_naive_utc():
    now = tables.utcnow()
    assert now.tzinfo is None and now.microsecond == 0
    assert abs(now - datetime.datetime.now(datetime.UTC).replace(tzinfo=None)) < \
        datetime.timedelta(seconds=5)

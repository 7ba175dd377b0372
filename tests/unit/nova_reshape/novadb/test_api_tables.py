"""nova's API database tables: what the reader selects, what the test database has."""

from __future__ import annotations

from nova_reshape.novadb import api_tables
from nova_reshape.novadb.tables import read_columns


def test_api_tables_read_only_the_flavor_figures():
    # is_public: the capacity check's --all-flavors takes the public ones
    assert {column.name for column in read_columns(api_tables.flavors)} == {
        "id", "name", "flavorid", "vcpus", "memory_mb", "root_gb", "ephemeral_gb", "swap",
        "is_public"}
    assert {"disabled", "created_at"} <= set(api_tables.flavors.c.keys())


def test_api_tables_have_no_soft_delete():
    for table in api_tables.metadata.sorted_tables:
        assert "deleted" not in table.c, table.name
        assert not {"created_at", "updated_at"} & {c.name for c in read_columns(table)}

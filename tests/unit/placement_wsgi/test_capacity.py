"""An inventory record's capacity, for numbers and for SQL columns (placement_wsgi/capacity.py)."""

from __future__ import annotations

import sqlalchemy as sa

from placement_wsgi.capacity import capacity, usable


def test_capacity_is_exact_and_usable_is_truncated():
    assert capacity(10, 2, 1.5) == 12.0
    assert capacity(3, 0, 0.7) == 3 * 0.7
    assert usable(3, 0, 0.7) == 2
    assert usable(10, 2, 1.5) == 12


def test_on_columns_it_is_the_same_expression_in_sql():
    table = sa.table("inventories", sa.column("total"), sa.column("reserved"),
                     sa.column("allocation_ratio"))
    expression = capacity(table.c.total, table.c.reserved, table.c.allocation_ratio)
    assert str(expression) == \
        "(inventories.total - inventories.reserved) * inventories.allocation_ratio"
    engine = sa.create_engine("sqlite://")
    with engine.connect() as connection:
        value = connection.execute(sa.select(capacity(sa.literal(10), sa.literal(2),
                                                      sa.literal(1.5)))).scalar_one()
    assert value == capacity(10, 2, 1.5)

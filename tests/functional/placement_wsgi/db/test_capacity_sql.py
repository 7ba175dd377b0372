"""The capacity the candidate engine has the database compute equals Python's, on every engine.

``rows.INVENTORY_CAPACITY`` (``placement_wsgi.capacity.capacity`` on columns,
with the ratio through ``rows.float_as_read``) is what the candidate loader
selects and the providers' ``resources`` filter compares against; Python's
formula on the values a plain read gives is what the rest of the service
(and the reference Placement) computes. Same float, so the same truncated
capacity and the same ``used + amount <= capacity`` answers, including
MariaDB, whose single-precision ``FLOAT`` reaches Python as its shortest
text.
"""

from __future__ import annotations

import random

import sqlalchemy as sa

from placement_wsgi.capacity import capacity, truncated
from placement_wsgi.db import rows, tables
from placement_wsgi.db.database import Database

_rp = tables.resource_providers
_inv = tables.inventories

RATIOS = [1.0, 16.0, 0.1, 0.3, 0.7, 1.1, 1.5, 2.9999999, 3.3333333, 0.123456789, 1e-7,
          123456789.0, 0.999999, 7.77, 1.2e20]
TOTALS = [(1, 0), (3, 0), (7, 1), (10, 3), (100, 0), (4096, 17), (2147483647, 0),
          (2147483647, 2147483646)]


def _cases() -> list[tuple[int, int, float]]:
    chosen = random.Random(28)  # fixed: the same rows on every engine and run
    cases = [(total, reserved, ratio) for ratio in RATIOS for total, reserved in TOTALS]
    cases += [(chosen.randint(1, 100000), chosen.randint(0, 3),
               round(chosen.uniform(0.01, 40.0), chosen.randint(1, 7))) for _ in range(400)]
    return cases


def _seed(database: Database, cases: list[tuple[int, int, float]]) -> None:
    def body(connection: sa.Connection) -> None:
        connection.execute(_rp.insert(), [
            {"id": index, "uuid": f"00000000-0000-0000-0000-{index:012d}",
             "name": f"rp{index}", "generation": 1, "root_provider_id": index}
            for index in range(1, len(cases) + 1)])
        connection.execute(_inv.insert(), [
            {"resource_provider_id": index, "resource_class_id": 0, "total": total,
             "reserved": reserved, "min_unit": 1, "max_unit": total, "step_size": 1,
             "allocation_ratio": ratio}
            for index, (total, reserved, ratio) in enumerate(cases, start=1)])

    database.write(body)


def test_the_databases_capacity_is_pythons(database: Database) -> None:
    cases = _cases()
    _seed(database, cases)
    by_statement = rows.Statement(lambda classes: sa.select(
        _inv.c.resource_provider_id, rows.INVENTORY_CAPACITY).where(
        rows.in_ids(_inv.c.resource_class_id, classes)))

    def body(connection: sa.Connection) -> None:
        # what the service reads elsewhere: the driver's values, the formula in Python
        expected = {provider: capacity(total, reserved, float(ratio))
                    for provider, total, reserved, ratio in connection.execute(sa.select(
                        _inv.c.resource_provider_id, _inv.c.total, _inv.c.reserved,
                        _inv.c.allocation_ratio))}
        assert len(expected) == len(cases)
        # the loader's way (binary rows on psycopg, one packed text on MariaDB) and a
        # plain read of the same expression
        for got in (dict(by_statement.rows(connection, [0])),
                    dict(rows.connection_rows(connection, sa.select(
                        _inv.c.resource_provider_id, rows.INVENTORY_CAPACITY))),
                    dict(tuple(row) for row in connection.execute(sa.select(
                        _inv.c.resource_provider_id, rows.INVENTORY_CAPACITY)))):
            assert got == expected
            assert {provider: truncated(value) for provider, value in got.items()} == {
                provider: truncated(value) for provider, value in expected.items()}

    database.read(body)


def test_float_as_read_is_the_column_except_on_mysql() -> None:
    from sqlalchemy.dialects import mysql, postgresql, sqlite

    expression = sa.select(rows.float_as_read(_inv.c.allocation_ratio))
    for dialect in (sqlite.dialect(), postgresql.dialect()):
        assert str(expression.compile(dialect=dialect)).startswith(
            "SELECT inventories.allocation_ratio")
    assert str(expression.compile(dialect=mysql.dialect())).startswith(
        "SELECT CAST(CAST(inventories.allocation_ratio AS CHAR) AS DOUBLE)")


def test_the_resources_filter_takes_what_python_would_allow(database: Database) -> None:
    """``GET /resource_providers?resources=`` filters in SQL with the same product:
    an amount up to the truncated capacity (and ``max_unit``) passes, one more does not."""
    from placement_wsgi.objects import resource_provider

    cases = _cases()[:len(RATIOS) * len(TOTALS)]
    _seed(database, cases)
    capacities = {index: truncated(capacity(total, reserved, ratio))
                  for index, (total, reserved, ratio) in enumerate(cases, start=1)}
    amounts = sorted({amount for value in capacities.values()
                      for amount in (value, value + 1) if 1 <= amount <= 10**6})

    def body(connection: sa.Connection) -> None:
        ratios = {index: float(ratio) for index, ratio in connection.execute(
            sa.select(_inv.c.resource_provider_id, _inv.c.allocation_ratio))}
        for amount in amounts:
            passing = set(connection.execute(
                resource_provider._with_capacity(0, amount)).scalars())
            allowed = {index for index, (total, reserved, _) in enumerate(cases, start=1)
                       if amount <= total
                       and amount <= capacity(total, reserved, ratios[index])}
            assert passing == allowed, amount

    database.read(body)

"""Reading nova's and Cyborg's databases while they misbehave, on PostgreSQL and MariaDB.

* Rows deleted by another connection between the reader's statements: the
  read is one repeatable-read snapshot, so every statement sees the rows as
  they were when the first one ran (no instance without its node, no node
  without its instances).
* The connection cut in the middle of the read (the TCP proxy closes it when
  a given table's statement is sent): one line naming the database, and
  nothing written (the database's checksum unchanged).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from nova_reshape.novadb.cells import read_one_cell
from nova_reshape.novadb.cyborg import read_cyborg
from nova_reshape.novadb.reader import read_cell
from nova_reshape.novadb.readonly import DatabaseReadError, display_url
from tests.fixtures import cyborg_db, databases, nova_db
from tests.fixtures.cyborg_db import cyborg_database
from tests.fixtures.nova_db import nova_cell
from tests.fixtures.tcp_proxy import TcpProxy

SERVER_ENGINES = [engine for engine in databases.enabled_engines() if engine != "sqlite"]

pytestmark = pytest.mark.skipif(not SERVER_ENGINES, reason=(
    "needs NOVA_RESHAPE_TEST_POSTGRESQL or NOVA_RESHAPE_TEST_MYSQL (SQLite's reader holds a "
    "lock that keeps a second writer out, so there is no concurrent deletion to see)"))


@pytest.fixture(params=SERVER_ENGINES or ["none"])
def cell_url(request) -> Iterator[str]:
    """A populated nova cell this test may change."""
    yield from nova_cell(request.param)


@contextlib.contextmanager
def _delete_everything_once(url: str, trigger: str) -> Iterator[list[bool]]:
    """Delete every instance and compute node (committed, from another connection)
    just before the reader's first statement on ``trigger``; yields ``[True]`` once done."""
    deleted: list[bool] = []
    other = sa.create_engine(url)

    def before(conn, cursor, statement, parameters, context, executemany) -> None:
        if deleted or trigger not in statement or conn.engine is other:
            return
        deleted.append(True)
        with other.begin() as connection:
            for table in ("migrations", "instance_extra", "instances", "pci_devices",
                          "compute_nodes"):
                connection.execute(sa.text(f"DELETE FROM {table}"))

    sa.event.listen(sa.Engine, "before_cursor_execute", before)
    try:
        yield deleted
    finally:
        sa.event.remove(sa.Engine, "before_cursor_execute", before)
        other.dispose()


def test_rows_deleted_while_reading_are_still_read_from_one_snapshot(cell_url) -> None:
    expected = read_cell(cell_url)
    assert expected.compute_nodes and expected.instances
    with _delete_everything_once(cell_url, "FROM instances") as deleted:
        snapshot = read_cell(cell_url)
    assert deleted == [True], "the deletion did not happen between the statements"
    assert snapshot == expected
    after = read_cell(cell_url)
    assert after.compute_nodes == () and after.instances == ()


#: (reader, what it names, the fixture's database, its checksum, a table it reads).
READERS = {
    "cell": (read_cell, "nova database", nova_cell, nova_db.checksums, b"FROM instances"),
    "one-cell": (read_one_cell, "nova database", nova_cell, nova_db.checksums,
                 b"FROM compute_nodes"),
    "cyborg": (read_cyborg, "cyborg database", cyborg_database, cyborg_db.checksums,
               b"FROM deployables"),
}


@pytest.mark.parametrize("engine", SERVER_ENGINES or ["none"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_connection_cut_mid_read_is_one_line_and_writes_nothing(engine, reader) -> None:
    read, what, database, checksums, statement = READERS[reader]
    for url in database(engine):
        before = checksums(url)
        with TcpProxy.for_url(url, lifetime=60) as proxy:
            proxied = proxy.url_for(url)
            proxy.cut_when(statement)
            with pytest.raises(DatabaseReadError) as raised:
                read(proxied)
            assert proxy.cuts == 1, "the cut did not happen"
        message = str(raised.value)
        assert message.startswith(f"{what}: {display_url(proxied)}: "), message
        assert "\n" not in message and "Traceback" not in message
        assert checksums(url) == before

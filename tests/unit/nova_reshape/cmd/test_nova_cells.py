"""cells_query: which nova databases a command reads, from its options or nova.conf."""

from __future__ import annotations

import pytest

from nova_reshape.cmd.nova_cells import NO_DATABASE, cells_query
from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.cmd.request import NovaDatabase
from nova_reshape.nova.conf.databases import DatabaseConnections

CONF = DatabaseConnections(api_database="mysql://db/nova_api", database="mysql://db/nova")


def test_one_cell_database_needs_no_api_database():
    assert cells_query(NovaDatabase(url="sqlite:///cell.db"), CONF) is None


def test_api_database_from_the_command_line_wins_over_nova_conf():
    query = cells_query(NovaDatabase(api_url="mysql://other/nova_api", cells=("cell2",),
                                     skip_unreachable_cells=True), CONF, ["cmp-1"])
    assert (query.api_url, query.default_connection, query.cells, query.hosts,
            query.skip_unreachable) == ("mysql://other/nova_api", "mysql://db/nova",
                                        ("cell2",), ("cmp-1",), True)
    assert cells_query(NovaDatabase(), CONF).api_url == "mysql://db/nova_api"


@pytest.mark.parametrize("source, connections, message", [
    (NovaDatabase(), DatabaseConnections(), NO_DATABASE),
    (NovaDatabase(url="sqlite:///c.db", cells=("cell1",)), CONF,
     "--cell and --skip-unreachable-cells need nova's API database, not --nova-database"),
])
def test_bad_input(source, connections, message):
    with pytest.raises(Refusal) as raised:
        cells_query(source, connections)
    assert raised.value.exit_class == ExitClass.BAD_INPUT and raised.value.message == message

"""read_cells: every cell nova's API database maps, on every enabled engine.

cell0 is never read; cell2's templated URL is filled from ``[database]
connection``; ``--cell`` limits the read; a host or compute node in two
cells, and an unreachable cell, stop it with one line naming the cells.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from nova_reshape.novadb import cells
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures import nova_db as fx


def query(cloud, **values):
    return cells.CellsQuery(api_url=cloud.api_url, default_connection=cloud.default_connection,
                            **values)


def hosts_by_cell(snapshot):
    return {read.cell.name: sorted(read.snapshot.hosts()) for read in snapshot.cells}


def test_every_cell_but_cell0_with_templates_filled(engine):
    with api_fx.nova_cloud(engine) as cloud:
        snapshot = cells.read_cells(query(cloud))
    assert hosts_by_cell(snapshot) == {"cell1": [fx.CMP1, fx.CMP2, fx.IRONIC_HOST],
                                       "cell2": [fx.CMP3]}
    cell2 = snapshot.cells[1]
    assert "{" in cell2.cell.database_connection
    assert cell2.url == cloud.cells["cell2"] and snapshot.skipped == ()


@pytest.mark.parametrize("wanted", ["cell2", api_fx.CELL2_UUID])
def test_cell_by_name_or_uuid(engine, wanted):
    with api_fx.nova_cloud(engine) as cloud:
        snapshot = cells.read_cells(query(cloud, cells=(wanted,)))
    assert hosts_by_cell(snapshot) == {"cell2": [fx.CMP3]}


def test_a_host_in_two_cells_names_both(engine):
    with api_fx.nova_cloud(engine, cell2_rows=fx.second_cell_rows(host=fx.CMP1)) as cloud, \
            pytest.raises(cells.CellConflict) as raised:
        cells.read_cells(query(cloud))
    assert str(raised.value).startswith(
        f"host {fx.CMP1} is in cell cell1 ({api_fx.CELL1_UUID}) and in cell cell2 "
        f"({api_fx.CELL2_UUID})")
    assert "\n" not in str(raised.value)


def test_a_compute_node_uuid_twice_names_both_cells(engine):
    rows = fx.second_cell_rows(node_uuid=fx.CMP1_UUID)
    with api_fx.nova_cloud(engine, cell2_rows=rows) as cloud, \
            pytest.raises(cells.CellConflict) as raised:
        cells.read_cells(query(cloud))
    assert str(raised.value).startswith(
        f"compute node {fx.CMP1_UUID} is in cell cell1 ({api_fx.CELL1_UUID}) and in cell "
        f"cell2 ({api_fx.CELL2_UUID})")


@pytest.mark.parametrize("unreachable", ["missing SQLite file", "server refusing"])
def test_an_unreachable_cell_stops_or_is_left_out(engine, tmp_path, unreachable):
    missing = (f"sqlite:///{tmp_path}/gone.sqlite" if unreachable == "missing SQLite file"
               else "mysql+pymysql://nova:secret@127.0.0.1:1/gone")
    with api_fx.nova_cloud(engine, cell2_url=missing) as cloud:
        with pytest.raises(cells.UnreachableCell) as raised:
            cells.read_cells(query(cloud))
        snapshot = cells.read_cells(query(cloud, skip_unreachable=True))
    assert str(raised.value).startswith(f"cell cell2 ({api_fx.CELL2_UUID}) ")
    assert "gone" in str(raised.value) and "\n" not in str(raised.value)
    assert "secret" not in str(raised.value)
    assert hosts_by_cell(snapshot) == {"cell1": [fx.CMP1, fx.CMP2, fx.IRONIC_HOST]}
    assert [(s.cell.name, s.hosts) for s in snapshot.skipped] == [("cell2", (fx.CMP3,))]


def test_a_template_without_database_connection_is_refused(engine):
    with api_fx.nova_cloud(engine) as cloud, pytest.raises(cells.BadCellSelection) as raised:
        cells.read_cells(cells.CellsQuery(api_url=cloud.api_url))
    assert "[database] connection" in str(raised.value) and "cell2" in str(raised.value)


@pytest.mark.parametrize("wanted, message", [
    ("cell9", "--cell cell9: no such cell"), ("cell0", "cell0 holds no compute hosts")])
def test_bad_cell_selection(engine, wanted, message):
    with api_fx.nova_cloud(engine) as cloud, pytest.raises(cells.BadCellSelection) as raised:
        cells.read_cells(query(cloud, cells=(wanted,)))
    assert message in str(raised.value)


def test_read_each_cell_runs_any_reader_and_gives_the_host_mappings(engine):
    seen = []

    def reader(connection, hosts):
        seen.append(tuple(hosts))
        return connection.execute(sa.text("SELECT count(*) FROM compute_nodes")).scalar_one()

    with api_fx.nova_cloud(engine) as cloud:
        each = cells.read_each_cell(query(cloud, hosts=(fx.CMP3,)), reader)
    assert [(cell.name, url, count) for cell, url, count in each.read] == [
        ("cell1", cloud.cells["cell1"], 4), ("cell2", cloud.cells["cell2"], 1)]
    assert seen == [(fx.CMP3,), (fx.CMP3,)]
    assert each.host_cells == {fx.CMP1: api_fx.CELL1_UUID, fx.CMP2: api_fx.CELL1_UUID,
                               fx.IRONIC_HOST: api_fx.CELL1_UUID, fx.CMP3: api_fx.CELL2_UUID}
    assert each.skipped == ()

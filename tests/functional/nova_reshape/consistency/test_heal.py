"""missing_allocations on the damaged cloud's real databases: what the migration's
pre-flight will list, nothing written, on every enabled engine."""

from __future__ import annotations

from nova_reshape.consistency.heal import Problem, missing_allocations
from nova_reshape.consistency.placement_io import PlacementState
from nova_reshape.novadb import cells
from nova_reshape.transport import open_direct
from placement_wsgi.db.database import Database
from tests.fixtures import heal_cloud as hc
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures.config import make_conf
from tests.fixtures.databases import checksum


def test_findings_of_the_damaged_cloud_and_nothing_written(engine, tmp_path):
    with api_fx.nova_cloud(engine, cell2_rows=hc.cell2_rows(vgpu=True)) as cloud:
        url, _ = hc.placement(engine, tmp_path)
        database = Database(url)
        before = checksum(database)
        read = cells.read_cells(cells.CellsQuery(
            api_url=cloud.api_url, default_connection=cloud.default_connection,
            root_disks=True)).cells
        with open_direct(make_conf(url)) as placement:
            found = missing_allocations(read, PlacementState(placement))
        assert checksum(database) == before
        database.dispose()
    assert [(item.instance, item.problem) for item in found] == [
        (hc.VGPU, Problem.UNHEALABLE), (hc.PLAIN, Problem.NO_ALLOCATIONS),
        (hc.PINNED, Problem.NO_ALLOCATIONS), (hc.VOLUME, Problem.NO_ALLOCATIONS),
        (hc.WRONG_OWNER, Problem.WRONG_OWNER)]
    assert all(item.cell.startswith("cell2") and item.host == hc.CMP3 for item in found)
    assert '"PCPU": 2' in found[2].detail

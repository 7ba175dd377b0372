"""The migration's consistency check on the heal fixture's damaged cloud, on every enabled
engine: the orphan and the instances without allocations of the nodes covered, and
nothing of the others; nothing written."""

from __future__ import annotations

import pytest

from nova_reshape.consistency import preflight as consistency
from nova_reshape.consistency.nova_side import NovaHolders
from nova_reshape.novadb import cells
from nova_reshape.novadb.holders import read_holders_on
from nova_reshape.transport import open_direct
from placement_wsgi.db.database import Database
from tests.fixtures import heal_cloud as hc
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures.config import make_conf
from tests.fixtures.databases import checksum

CMP3_BY_UUID = consistency.CoveredNode(hc.CMP3_NODE, hc.CMP3_UUID, hc.CMP3)
CMP3_BY_NAME = consistency.CoveredNode(hc.CMP3_NODE, None, hc.CMP3)
CMP4 = consistency.CoveredNode(hc.CMP4_NODE, hc.CMP4_UUID, hc.CMP4)


def checked(engine, tmp_path, nodes):
    """The check of ``nodes`` on the damaged cloud (vGPU instance included)."""
    with api_fx.nova_cloud(engine, cell2_rows=hc.cell2_rows(vgpu=True)) as cloud:
        url, _ = hc.placement(engine, tmp_path)
        database = Database(url)
        before = checksum(database)
        query = cells.CellsQuery(api_url=cloud.api_url,
                                 default_connection=cloud.default_connection, root_disks=True)
        holders = NovaHolders.from_cells(cells.read_each_cell(query, read_holders_on))
        read = cells.read_cells(query).cells
        with open_direct(make_conf(url)) as placement:
            result = consistency.check(placement, holders, read, nodes)
        assert checksum(database) == before
        database.dispose()
    return result


@pytest.mark.parametrize("node", [CMP3_BY_UUID, CMP3_BY_NAME], ids=["uuid", "name"])
def test_the_covered_node_s_orphan_and_instances_without_allocations(engine, tmp_path, node):
    result = checked(engine, tmp_path, [node])
    found = [(item.kind, item.node, item.consumer, item.provider, item.command)
             for item in result]
    heal = consistency.HEAL_COMMAND
    assert found == [
        # MOVED: nova has it on cmp-4, Placement on cmp-3
        (consistency.Kind.ORPHANED, hc.CMP3_NODE, hc.MOVED, hc.CMP3_UUID,
         consistency.AUDIT_COMMAND.format(provider=hc.CMP3_UUID)),
        # oldest first, as heal_allocations visits them; a vGPU flavor needs --heal-nested
        (consistency.Kind.MISSING, hc.CMP3_NODE, hc.VGPU, None,
         heal.format(instance=hc.VGPU) + " --heal-nested"),
        (consistency.Kind.MISSING, hc.CMP3_NODE, hc.PLAIN, None, heal.format(instance=hc.PLAIN)),
        (consistency.Kind.MISSING, hc.CMP3_NODE, hc.PINNED, None,
         heal.format(instance=hc.PINNED)),
        (consistency.Kind.MISSING, hc.CMP3_NODE, hc.VOLUME, None,
         heal.format(instance=hc.VOLUME))]
    assert "VCPU=2" in result[0].what and "MEMORY_MB=2048" in result[0].what
    assert '"PCPU": 2' in result[3].what  # the body heal would write
    # WRONG_OWNER (another project and user) is no finding: the reshape moves it as
    # it is; BUSY (task state) is skipped, as heal skips it


def test_nodes_not_covered_are_not_looked_at(engine, tmp_path):
    # cmp-4 holds nothing in Placement and its one instance (MOVED) holds
    # allocations elsewhere (read through the API, as it is not on cmp-4's tree):
    # nothing to say about cmp-4, and cmp-3 is not covered
    assert checked(engine, tmp_path, [CMP4]) == []


def test_covered_roots_by_uuid_then_by_root_name():
    providers = [consistency.Provider("u1", "n1", "u1"), consistency.Provider("c1", "n2", "u1"),
                 consistency.Provider("u3", "n3", "u3")]
    nodes = [consistency.CoveredNode("n1", "u1", "h"),
             consistency.CoveredNode("n3", "gone", "h"),   # uuid unknown: by name
             consistency.CoveredNode("n2", None, "h"),     # a child's name: no root
             consistency.CoveredNode("n4", None, "h")]     # not in Placement
    assert consistency.covered_roots(providers, nodes) == {"u1": "n1", "u3": "n3"}

"""CellMapping: cell0 is known by nova's fixed uuid."""

from __future__ import annotations

from nova_reshape.nova.cell import CELL0_UUID, CellMapping


def test_cell0_is_known_by_its_uuid():
    cell0 = CellMapping(uuid=CELL0_UUID, name="cell0", database_connection="sqlite://")
    cell1 = CellMapping(uuid="5d1d1a1c-1f50-4b6e-a7a4-8bb3c1f4c3a1", name="cell1",
                        database_connection="mysql+pymysql://nova@db/nova",
                        transport_url="rabbit://nova@mq//")
    assert cell0.is_cell0 and not cell1.is_cell0

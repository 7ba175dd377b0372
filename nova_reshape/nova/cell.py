"""Cells as nova's API database maps them (``cell_mappings``).

Every nova deployment has cell0, where instances that could not be
scheduled are buried; its uuid is fixed by nova. A reader of every cell
skips it when looking for compute nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

#: nova's fixed uuid of cell0.
CELL0_UUID = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class CellMapping:
    """One ``cell_mappings`` row: how to reach a cell's database and message queue."""

    uuid: str
    name: str | None
    database_connection: str
    transport_url: str | None = None

    @property
    def is_cell0(self) -> bool:
        return self.uuid == CELL0_UUID

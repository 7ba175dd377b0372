"""Cells and a Placement stand-in for the heal decisions' unit tests."""

from __future__ import annotations

import datetime
from typing import Any

from nova_reshape.consistency.nested import TreeView
from nova_reshape.nova.cell import CellMapping
from nova_reshape.nova.flavor import Flavor, FlavorInfo
from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.novadb.cells import CellRead
from nova_reshape.novadb.records import CellSnapshot, ComputeNodeRecord

T0 = datetime.datetime(2026, 1, 1)
NODE = "node-1"
NODE_UUID = "cccccccc-0000-4000-8000-000000000001"


def instance(uuid: str, minute: int = 0, host: str | None = "h1", node: str | None = NODE,
             vcpus: int = 2, **values: Any) -> InstanceRecord:
    specs = values.pop("specs", {})
    flavor = Flavor(name="f", vcpus=vcpus, memory_mb=1024, root_gb=5, extra_specs=specs)
    return InstanceRecord(uuid=uuid, host=host, node=node, project_id="p", user_id="u",
                          flavor=FlavorInfo(cur=flavor), image_ref="img",
                          created_at=T0 + datetime.timedelta(minutes=minute), **values)


def cell(name: str, *instances: InstanceRecord, root_disks: dict | None = None,
         devices: tuple = ()) -> CellRead:
    node = ComputeNodeRecord(id=1, uuid=NODE_UUID, host="h1", hypervisor_hostname=NODE,
                             hypervisor_type="QEMU", vcpus=8, memory_mb=8192, local_gb=100)
    snapshot = CellSnapshot(compute_nodes=(node,), services={}, instances=tuple(instances),
                            pci_devices=devices, migrations=(), root_disks=root_disks or {})
    return CellRead(CellMapping(uuid=f"uuid-{name}", name=name, database_connection=""),
                    "sqlite://", snapshot)


class FakePlacement:
    """Consumers' ``GET /allocations`` bodies and trees, as PlacementState answers."""

    def __init__(self, consumers: dict[str, Any] | None = None,
                 trees: dict[str, TreeView] | None = None) -> None:
        self.consumers = consumers or {}
        self.trees = trees or {}
        self.asked: list[str] = []

    def allocations_of(self, consumer: str) -> Any:
        self.asked.append(consumer)
        return self.consumers.get(consumer, {"allocations": {}})

    def tree(self, root: str) -> TreeView | None:
        return self.trees.get(root)


def held(resources: dict[str, int], project: str = "p", user: str = "u",
         provider: str = NODE_UUID) -> dict[str, Any]:
    return {"allocations": {provider: {"generation": 3, "resources": resources}},
            "project_id": project, "user_id": user, "consumer_generation": 1}

#!/usr/bin/env python3
"""A reshape done in-process through PlacementDirect (docs/reshape-example.md).

An "old release" left VGPU inventory on the compute node's root provider,
with an instance using one VGPU there. The "new release" driver reports
VGPU on a child provider per physical GPU. At start-up the resource
tracker notices (the driver raises ReshapeNeeded), hands the driver the
node's allocations, and sends one atomic ``POST /reshaper`` that moves the
inventory and the instance's VGPU allocation to the child.

No service runs: PlacementDirect serves the Placement app in-process on
the database given (default: a new SQLite file in a temporary directory).

    python tools/reshape_example.py [--database sqlite:////tmp/placement.sqlite]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import uuid
from typing import Any

from oslo_config import cfg

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from nova_reshape import exception  # noqa: E402
from nova_reshape.compute.resource_tracker import ComputeNode, ResourceTracker  # noqa: E402
from nova_reshape.report import SchedulerReportClient  # noqa: E402
from nova_reshape.virt.driver import ComputeDriver  # noqa: E402
from placement_wsgi import conf as placement_conf  # noqa: E402
from placement_wsgi.direct import PlacementDirect  # noqa: E402

NODE = "cmp-07"
GPU = f"{NODE}_pci_0000_84_00_0"
VGPU_INVENTORY = {"total": 8, "max_unit": 8}


class VgpuChildDriver(ComputeDriver):
    """Reports VCPU and MEMORY_MB on the root and VGPU on one child per GPU."""

    def update_provider_tree(self, provider_tree: Any, nodename: str,
                             allocations: dict[str, Any] | None = None) -> None:
        if not provider_tree.exists(GPU):
            provider_tree.new_child(GPU, nodename)
        root = provider_tree.data(nodename)
        gpu = provider_tree.data(GPU).uuid
        if "VGPU" in root.inventory:
            if allocations is None:
                raise exception.ReshapeNeeded()
            for body in allocations.values():
                held = body["allocations"].get(root.uuid, {}).get("resources", {})
                if "VGPU" in held:
                    body["allocations"][gpu] = {"resources": {"VGPU": held.pop("VGPU")}}
        provider_tree.update_inventory(GPU, {"VGPU": VGPU_INVENTORY})
        provider_tree.update_inventory(nodename, {
            "VCPU": {"total": 32, "allocation_ratio": 4.0},
            "MEMORY_MB": {"total": 65536}})


def make_conf(database: str) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf([], project="placement", default_config_files=[], default_config_dirs=[],
         use_env=False)
    conf.set_override("connection", database, "placement_database")
    conf.set_override("sync_on_startup", True, "placement_database")
    return conf


def _check(response: Any) -> Any:
    if response.status_code >= 400:
        raise SystemExit(f"placement said {response.status_code}: {response.text}")
    return response.json() if response.content else None


def seed_old_release(placement: Any, node_uuid: str, instance: str) -> None:
    """What an older release left behind: VGPU on the root, in use."""
    _check(placement.post("/resource_providers", json={"uuid": node_uuid, "name": NODE},
                          microversion="1.20"))
    _check(placement.put(f"/resource_providers/{node_uuid}/inventories", json={
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 32, "allocation_ratio": 4.0},
                        "MEMORY_MB": {"total": 65536}, "VGPU": VGPU_INVENTORY}},
        microversion="1.26"))
    _check(placement.put(f"/allocations/{instance}", json={
        "allocations": {node_uuid: {"resources": {"VCPU": 2, "MEMORY_MB": 2048, "VGPU": 1}}},
        "project_id": "demo-project", "user_id": "demo-user", "consumer_generation": None},
        microversion="1.28"))


def describe(placement: Any, node_uuid: str, instance: str) -> dict[str, Any]:
    """Provider name -> inventory totals, and the instance's allocations by name."""
    providers = _check(placement.get(f"/resource_providers?in_tree={node_uuid}",
                                     microversion="1.14"))["resource_providers"]
    names = {rp["uuid"]: rp["name"] for rp in providers}
    inventory = {
        rp["name"]: {rc: record["total"] for rc, record in _check(placement.get(
            f"/resource_providers/{rp['uuid']}/inventories"))["inventories"].items()}
        for rp in providers}
    held = _check(placement.get(f"/allocations/{instance}", microversion="1.28"))
    allocations = {names.get(rp, rp): entry["resources"]
                   for rp, entry in held["allocations"].items()}
    return {"inventory": inventory, "allocations": allocations}


def run(database: str) -> dict[str, Any]:
    """Seed, reshape at start-up, and return the layout before and after."""
    node_uuid, instance = str(uuid.uuid4()), str(uuid.uuid4())
    with PlacementDirect(make_conf(database)) as placement:
        seed_old_release(placement, node_uuid, instance)
        before = describe(placement, node_uuid, instance)
        tracker = ResourceTracker(
            "host1", VgpuChildDriver(), SchedulerReportClient(placement),
            compute_nodes=[ComputeNode(node_uuid, NODE)])
        tracker._update_available_resource_for_node(None, NODE, startup=True)
        after = describe(placement, node_uuid, instance)
    return {"before": before, "after": after}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", help="SQLAlchemy URL (default: a new SQLite file)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="reshape-example-") as directory:
        database = args.database or f"sqlite:///{os.path.join(directory, 'placement.sqlite')}"
        result = run(database)
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

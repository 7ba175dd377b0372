#!/usr/bin/env python3
"""Write a realistic pre-upgrade deployment: Placement data in the flat shape + host files.

Every host is one compute node whose root provider holds everything, as an
older release reported it: ``VCPU``, ``PCPU``, ``MEMORY_MB``, ``DISK_GB``,
``VGPU`` (the sum of its GPUs) and ``FPGA`` (its accelerator, counted on the
root); PCI devices are not in Placement at all. Instances hold their
resources on the root. The matching host description file
(docs/host-description.md) records the GPUs, two NUMA cells, PCI devices (two
passthrough GPUs and a PF with four VFs), the FPGA, and which of them every
instance uses, so ``nova-reshape-manage placement migrate_compute_inventory``
can move the deployment to the nested shape.

Per host, instance ``i`` (of ``--instances``) takes 1 VGPU on GPU ``i mod
gpus`` (GPU capacity is sized to fit), lives on NUMA cell ``i mod 2``, holds 2
VCPU (every fourth instance 2 dedicated PCPU instead), 4 GiB and 20 GB; every
eighth holds a PCI device and instances 5 and 6 one FPGA unit each. With
``--ironic K`` the last K hosts are ironic nodes (skipped by the migration).
Names and uuids are derived from ``--seed``, so a run is reproducible.

Writes go through the Placement API (PlacementDirect on ``--database``, or
``--placement-url``): one provider create, one inventory PUT, one traits PUT
and one ``POST /allocations`` for all instances per host. ``--bulk`` (with
``--database``) writes the same rows straight into the tables instead, with
multi-row inserts, 500 hosts per transaction (``--chunk``): 3-5 ms per
host instead of ~40 ms through the API (docs/performance.md, "Building the
benchmark deployment"). Both paths work from one description of the hosts
(:func:`planned_hosts`) and write the host files the same way.

    python tools/generate_deployment.py --database sqlite:////tmp/p.sqlite \\
        --out /tmp/hosts --hosts 10 --gpus 4 --instances 16
    python tools/generate_deployment.py --bulk --database sqlite:////tmp/p.sqlite \\
        --out /tmp/hosts --hosts 10000
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import os
import sys
import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple

import yaml

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import flat_placement_rows  # noqa: E402

CELLS = 2
CPUS_PER_CELL = 16
PCPUS_PER_CELL = 8
MEMORY_PER_CELL = 65536
PCI_GPUS = ("0000:d8:00.0", "0000:d9:00.0")
PF = "0000:3b:00.0"
VFS = tuple(f"0000:3b:00.{function}" for function in range(2, 6))
FPGA_ADDRESS = "0000:5e:00.0"


@dataclasses.dataclass
class Summary:
    hosts: int = 0
    ironic: int = 0
    instances: int = 0
    calls: int = 0
    #: Transactions of the bulk path (generate_bulk).
    transactions: int = 0
    files: list[str] = dataclasses.field(default_factory=list)


def stable_uuid(seed: int, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"nova-reshape-generated/{seed}/{name}"))


def _ok(response: Any, what: str) -> Any:
    if response.status_code >= 400:
        raise RuntimeError(f"{what}: {response.status_code} {response.text}")
    return response.json() if response.content else None


#: Device kinds a generated host has by default.
KINDS = ("numa", "pci", "accelerators")
#: Opt-in kinds: "pinned" is CPU pinning as before Train (no PCPU on the root,
#: pinned instances holding VCPU, the CPU sets in the host file); "disabled"
#: makes the first host's compute service disabled.
EXTRA_KINDS = ("pinned", "disabled")


def host_layout(hostname: str, seed: int, gpus: int, instances: int,
                kinds: tuple[str, ...] = KINDS) -> dict[str, Any]:
    """The host description of one compute host (a dict ready for YAML).

    ``kinds`` picks which of NUMA cells, PCI devices and accelerators the
    host has besides its ``gpus`` (without NUMA, CPUs and memory stay on
    the root provider).
    """
    capacity = max(1, math.ceil(instances / gpus)) if gpus else 0
    cells = [{"id": cell,
              "cpus": f"{cell * 24}-{cell * 24 + CPUS_PER_CELL - 1}",
              "pcpus": f"{cell * 24 + CPUS_PER_CELL}-{cell * 24 + 23}",
              "memory_mb": MEMORY_PER_CELL, "huge_pages": {2048: 1024}}
             for cell in range(CELLS)]
    devices: list[dict[str, Any]] = [
        {"address": address, "vendor_id": "10de", "product_id": "20b5", "traits": ["a100"]}
        for address in PCI_GPUS]
    devices += [{"address": vf, "vendor_id": "8086", "product_id": "154c", "type": "type-VF",
                 "parent": PF, "resource_class": "fast_nic"} for vf in VFS]
    pci_free = [*PCI_GPUS, *VFS] if "pci" in kinds else []
    consumers = []
    for index in range(instances):
        consumer: dict[str, Any] = {"uuid": stable_uuid(seed, f"{hostname}/instance-{index}")}
        if "numa" in kinds:
            consumer["numa"] = [index % CELLS]
        if gpus:
            address = f"0000:{0x84 + index % gpus:02x}:00.0"
            consumer["mdevs"] = [{"uuid": stable_uuid(seed, f"{hostname}/mdev-{index}"),
                                  "gpu": address}]
        if index % 8 == 0 and pci_free:
            consumer["pci"] = [pci_free.pop(0)]
        if index in (5, 6) and "accelerators" in kinds:
            consumer["accelerators"] = [{"device": f"{hostname}-fpga-0", "count": 1}]
        if index % 4 == 3 and "pinned" in kinds:
            consumer["cpu_policy"] = "dedicated"
        consumers.append(consumer)
    layout: dict[str, Any] = {
        "nodename": hostname, "uuid": stable_uuid(seed, hostname), "hypervisor_type": "QEMU",
        "gpus": [{"address": f"0000:{0x84 + g:02x}:00.0", "mdev_types": ["nvidia-35"],
                  "capacity": capacity} for g in range(gpus)]}
    if "pinned" in kinds:
        layout["cpu_shared_set"] = ",".join(cell["cpus"] for cell in cells)
        layout["cpu_dedicated_set"] = ",".join(cell["pcpus"] for cell in cells)
    if "disabled" in kinds and hostname.endswith("-0000"):
        layout["disabled"] = True
    if "numa" in kinds:
        layout["numa_cells"] = cells
    if "pci" in kinds:
        layout["pci_devices"] = devices
    if "accelerators" in kinds:
        layout["accelerators"] = [{"name": f"{hostname}-fpga-0", "type": "FPGA",
                                   "address": FPGA_ADDRESS, "vendor_id": "8086",
                                   "product_id": "09c4", "capacity": 2,
                                   "traits": ["CUSTOM_FPGA_INTEL_PAC_ARRIA10"]}]
    layout["consumers"] = consumers
    return layout


def flat_inventory(layout: dict[str, Any]) -> dict[str, Any]:
    """The root inventory an older release reported for ``layout``."""
    gpu_total = sum(gpu["capacity"] for gpu in layout["gpus"])
    inventory = {
        "VCPU": {"total": CELLS * CPUS_PER_CELL, "allocation_ratio": 4.0},
        "PCPU": {"total": CELLS * PCPUS_PER_CELL},
        "MEMORY_MB": {"total": CELLS * MEMORY_PER_CELL, "reserved": 512},
        "DISK_GB": {"total": 2000},
    }
    if "cpu_dedicated_set" in layout:
        del inventory["PCPU"]  # before Train: pinned guests counted as VCPU
    if layout.get("accelerators"):
        inventory["FPGA"] = {"total": 2}
    if gpu_total:
        inventory["VGPU"] = {"total": gpu_total}
    return {rc: {"min_unit": 1, "max_unit": record["total"], "step_size": 1, "reserved": 0,
                 "allocation_ratio": 1.0, **record} for rc, record in inventory.items()}


def flat_allocations(layout: dict[str, Any], seed: int) -> dict[str, Any]:
    """Every instance's allocations on the root, as ``POST /allocations`` wants them."""
    root = layout["uuid"]
    body = {}
    for index, consumer in enumerate(layout["consumers"]):
        resources = {"MEMORY_MB": 4096, "DISK_GB": 20}
        pre_train = "cpu_dedicated_set" in layout
        resources["PCPU" if index % 4 == 3 and not pre_train else "VCPU"] = 2
        if consumer.get("mdevs"):
            resources["VGPU"] = len(consumer["mdevs"])
        if consumer.get("accelerators"):
            resources["FPGA"] = sum(a["count"] for a in consumer["accelerators"])
        body[consumer["uuid"]] = {
            "allocations": {root: {"resources": resources}},
            "project_id": stable_uuid(seed, f"project-{index % 7}").replace("-", ""),
            "user_id": stable_uuid(seed, f"user-{index % 3}").replace("-", ""),
            "consumer_generation": None}
    return body


def host_traits(layout: dict[str, Any]) -> list[str]:
    """The root's traits as the compute service set them for ``layout``."""
    return ["COMPUTE_NODE"] + (["COMPUTE_STATUS_DISABLED"] if layout.get("disabled") else [])


#: The one resource class (and inventory) of a generated ironic node.
IRONIC_CLASS = "CUSTOM_BAREMETAL_GOLD"
IRONIC_INVENTORY = {IRONIC_CLASS: {"total": 1}}


def write_host(placement: Any, layout: dict[str, Any], seed: int) -> int:
    """Create one host's flat Placement data; returns the number of requests."""
    root = layout["uuid"]
    _ok(placement.post("/resource_providers", json={"uuid": root, "name": layout["nodename"]},
                       microversion="1.20"), "create provider")
    _ok(placement.put(f"/resource_providers/{root}/inventories", json={
        "resource_provider_generation": 0, "inventories": flat_inventory(layout)},
        microversion="1.26"), "set inventory")
    _ok(placement.put(f"/resource_providers/{root}/traits", json={
        "resource_provider_generation": 1, "traits": host_traits(layout)},
        microversion="1.6"), "set traits")
    calls = 3
    allocations = flat_allocations(layout, seed)
    if allocations:
        _ok(placement.post("/allocations", json=allocations, microversion="1.28"),
            "write allocations")
        calls += 1
    return calls


def write_ironic(placement: Any, hostname: str, seed: int) -> int:
    root = stable_uuid(seed, hostname)
    _ok(placement.post("/resource_providers", json={"uuid": root, "name": hostname},
                       microversion="1.20"), "create provider")
    _ok(placement.put(f"/resource_classes/{IRONIC_CLASS}", microversion="1.7"),
        "resource class")
    _ok(placement.put(f"/resource_providers/{root}/inventories", json={
        "resource_provider_generation": 0, "inventories": IRONIC_INVENTORY},
        microversion="1.26"),
        "set inventory")
    return 3


def write_described(placement: Any, document: dict[str, Any], seed: int = 0) -> int:
    """Flat Placement data for an existing host description (e.g. one describe_hosts
    wrote): the node's root as an older release reported it and every consumer's
    allocations on it, sized as :func:`flat_inventory` and :func:`flat_allocations`
    size the generated hosts'. Returns the number of requests."""
    calls = 0
    for node in document["nodes"]:
        if node.get("hypervisor_type") == "ironic":
            _ok(placement.post("/resource_providers", json={
                "uuid": node["uuid"], "name": node["nodename"]}, microversion="1.20"),
                "create provider")
            calls += 1
        else:
            calls += write_host(placement, {"gpus": [], "consumers": [], **node}, seed)
    return calls


class PlannedHost(NamedTuple):
    """One host of a generated deployment: its host file and what Placement holds for it."""

    hostname: str
    #: The host description file's content.
    document: dict[str, Any]
    #: The compute node's layout, or None for an ironic node.
    layout: dict[str, Any] | None


def planned_hosts(hosts: int, gpus: int, instances: int, ironic: int = 0, seed: int = 0,
                  prefix: str = "cmp", kinds: tuple[str, ...] = KINDS) -> Iterator[PlannedHost]:
    """The ``hosts`` hosts of a deployment (the last ``ironic`` of them ironic), in order.

    The one description both writers (:func:`generate` through the API,
    :func:`generate_bulk` on the tables) work from.
    """
    for index in range(hosts):
        hostname = f"{prefix}-{index:04d}"
        if index >= hosts - ironic:
            yield PlannedHost(hostname, {"version": 1, "host": hostname, "nodes": [
                {"nodename": hostname, "uuid": stable_uuid(seed, hostname),
                 "hypervisor_type": "ironic"}]}, None)
        else:
            layout = host_layout(hostname, seed, gpus, instances, kinds)
            yield PlannedHost(hostname, {"version": 1, "host": hostname, "nodes": [layout]},
                              layout)


#: libyaml's dumper when PyYAML has it (same output, several times faster).
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def write_host_file(out_dir: str, host: PlannedHost, summary: Summary) -> None:
    """Write ``host``'s description file into ``out_dir`` and count it in ``summary``."""
    path = os.path.join(out_dir, f"{host.hostname}.yaml")
    with open(path, "w", encoding="utf-8") as stream:
        yaml.dump(host.document, stream, Dumper=_YAML_DUMPER, sort_keys=False,
                  default_flow_style=None)
    summary.files.append(path)
    if host.layout is None:
        summary.ironic += 1
    else:
        summary.hosts += 1
        summary.instances += len(host.layout["consumers"])


def generate(placement: Any, out_dir: str, hosts: int, gpus: int = 4, instances: int = 16,
             ironic: int = 0, seed: int = 0, prefix: str = "cmp",
             progress: Any = None, kinds: tuple[str, ...] = KINDS) -> Summary:
    """Write ``hosts`` hosts (the last ``ironic`` of them ironic) and their host files
    through the Placement API, a few requests per host."""
    os.makedirs(out_dir, exist_ok=True)
    summary = Summary()
    for done, host in enumerate(planned_hosts(hosts, gpus, instances, ironic, seed, prefix,
                                              kinds), start=1):
        if host.layout is None:
            summary.calls += write_ironic(placement, host.hostname, seed)
        else:
            summary.calls += write_host(placement, host.layout, seed)
        write_host_file(out_dir, host, summary)
        if progress is not None:
            progress("generate", done, hosts)
    return summary


#: Hosts per transaction of :func:`generate_bulk`.
BULK_CHUNK = 500


def flat_rows(host: PlannedHost, seed: int) -> flat_placement_rows.FlatRows:
    """What :func:`write_host` / :func:`write_ironic` send for ``host``, as one record."""
    uuid_ = stable_uuid(seed, host.hostname)
    if host.layout is None:
        return flat_placement_rows.FlatRows(uuid_, host.hostname, IRONIC_INVENTORY, [], {})
    return flat_placement_rows.FlatRows(
        uuid_, host.hostname, flat_inventory(host.layout),
        host_traits(host.layout), flat_allocations(host.layout, seed))


def generate_bulk(database: Any, out_dir: str, hosts: int, gpus: int = 4,
                  instances: int = 16, ironic: int = 0, seed: int = 0, prefix: str = "cmp",
                  progress: Any = None, kinds: tuple[str, ...] = KINDS,
                  chunk: int = BULK_CHUNK) -> Summary:
    """The deployment :func:`generate` writes, inserted straight into the tables.

    ``database`` is a :class:`placement_wsgi.db.database.Database` with the
    schema and standard names loaded (:func:`open_database`) and none of
    these hosts yet. ``chunk`` hosts go in per transaction, so a failure
    leaves whole hosts; host files are written as :func:`generate` writes
    them. For benchmarks and tests that need a big deployment fast; the
    functional tests check that both paths give the same rows.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1 host, not {chunk}")
    from placement_wsgi.objects import resource_class
    os.makedirs(out_dir, exist_ok=True)
    if ironic:
        resource_class.ensure_resource_class(database, IRONIC_CLASS)
    summary = Summary()
    planned = planned_hosts(hosts, gpus, instances, ironic, seed, prefix, kinds)
    while batch := list(itertools.islice(planned, chunk)):
        database.write(flat_placement_rows.insert_flat_rows,
                       [flat_rows(host, seed) for host in batch])
        summary.transactions += 1
        for host in batch:
            write_host_file(out_dir, host, summary)
        if progress is not None:
            progress("generate", len(summary.files), hosts)
    return summary


def open_database(url: str) -> Any:
    """The :class:`~placement_wsgi.db.database.Database` the service would open on
    ``url`` (same options as :func:`direct_conf`), schema and standard names loaded."""
    from placement_wsgi import deploy
    from placement_wsgi.db import migration
    database = deploy.database_from_conf(direct_conf(url))
    migration.upgrade(database)
    return database


def direct_conf(database: str, sync: bool = True) -> Any:
    """A placement configuration for ``database`` (schema created when ``sync``)."""
    from oslo_config import cfg

    from placement_wsgi import conf as placement_conf
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf([], project="placement", default_config_files=[], default_config_dirs=[],
         use_env=False)
    conf.set_override("connection", database, "placement_database")
    conf.set_override("sync_on_startup", sync, "placement_database")
    return conf


def write_config(path: str, database: str) -> None:
    """A minimal placement.conf naming ``database`` (for --config-file)."""
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(f"[placement_database]\nconnection = {database}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--database", help="SQLAlchemy URL (schema created if needed)")
    target.add_argument("--placement-url", help="a running Placement service")
    parser.add_argument("--token", default="admin")
    parser.add_argument("--out", required=True, help="directory for the host files")
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--instances", type=int, default=16)
    parser.add_argument("--ironic", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="devices besides GPUs, comma-separated from: "
                        + ",".join(KINDS + EXTRA_KINDS) + " (default "
                        + ",".join(KINDS) + "; empty for GPUs only)")
    parser.add_argument("--bulk", action="store_true",
                        help="insert the same rows straight into the tables of --database, "
                        f"{BULK_CHUNK} hosts per transaction (fast; for new deployments)")
    parser.add_argument("--chunk", type=int, default=BULK_CHUNK,
                        help="hosts per transaction with --bulk")
    args = parser.parse_args(argv)
    kinds = tuple(kind for kind in args.kinds.split(",") if kind)
    unknown = set(kinds) - set(KINDS + EXTRA_KINDS)
    if unknown:
        parser.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    if args.bulk and not args.database:
        parser.error("--bulk writes to the tables: it needs --database, not --placement-url")
    if args.chunk < 1:
        parser.error("--chunk must be at least 1")
    from nova_reshape.progress import progress_callback
    progress = progress_callback(sys.stderr)
    shape = dict(gpus=args.gpus, instances=args.instances, ironic=args.ironic, seed=args.seed,
                 progress=progress, kinds=kinds)
    if args.bulk:
        database = open_database(args.database)
        try:
            summary = generate_bulk(database, args.out, args.hosts, chunk=args.chunk, **shape)
        except flat_placement_rows.ExistingProviders as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        finally:
            database.dispose()
    elif args.database:
        from placement_wsgi.direct import PlacementDirect
        with PlacementDirect(direct_conf(args.database)) as placement:
            summary = generate(placement, args.out, args.hosts, **shape)
    else:
        from nova_reshape.transport import http_placement
        placement = http_placement(args.placement_url, token=args.token)
        summary = generate(placement, args.out, args.hosts, **shape)
    print(f"{summary.hosts} compute hosts, {summary.ironic} ironic, {summary.instances} "
          f"instances, {summary.calls} Placement requests, {summary.transactions} bulk "
          f"transactions; host files in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Benchmark of ``placement heal_allocations`` offline: N compute nodes, M instances.

Builds a nova API database (cell0 and one cell), the cell's database (N
compute nodes, M instances spread over them with their embedded flavors,
every 10th pinned, every 20th volume-backed) and a Placement database
(every node a flat root with VCPU, PCPU, MEMORY_MB and DISK_GB; every
instance's allocation written, except every ``--missing-every``-th, which
has none, and every 47th, whose consumer has another project and user),
all with set-based inserts, not measured. Then it times, as an operator
runs them (``nova-reshape-manage`` in-process, PlacementDirect on the
database): a ``--dry-run``, the heal itself and a second run (nothing to
do, exit 4), and reports wall seconds, this process's CPU seconds (the
database server's are not in them), instances healed, exit statuses and
the load average when the runs started (on a shared machine the wall
time is that of a share of the CPU).
Target (issue 23): 10,000 nodes and 100,000 instances in at most 60 s on
PostgreSQL; nova's own command takes one API round trip per instance. Not
a test.

    python tools/bench_heal.py                                  # SQLite files
    python tools/bench_heal.py --engine postgresql --nodes 10000 --instances 100000
    python tools/bench_heal.py --engine mysql --server mysql+pymysql://root@127.0.0.1:3306

``--engine postgresql|mysql`` creates three throwaway databases on the
local server (``--server`` to name another) and drops them at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from typing import Any

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import bench_migrate  # noqa: E402
import generate_deployment  # noqa: E402
import make_nova_cell  # noqa: E402
import profile_run  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from flat_placement_rows import FlatRows, insert_flat_rows  # noqa: E402

from nova_reshape.cmd import manage  # noqa: E402
from nova_reshape.novadb import api_tables, tables  # noqa: E402
from placement_wsgi.direct import PlacementDirect  # noqa: E402

CELL1_UUID = "ce110000-0000-4000-8000-000000000001"
SMALL = {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 10}
#: Rows per insert statement.
CHUNK = 5000


def node_uuid(index: int) -> str:
    return f"c0000000-0000-4000-8000-{index:012d}"


def instance_uuid(index: int) -> str:
    return f"10000000-0000-4000-8000-{index:012d}"


def _insert(connection: sa.Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), CHUNK):
        connection.execute(table.insert(), rows[start:start + CHUNK])


def seed_cell(url: str, nodes: int, instances: int) -> None:
    """The cell: compute nodes and instances (see the module)."""
    small = make_nova_cell.flavor_info(make_nova_cell.flavor("m1.small", 2, 2048))
    pinned = make_nova_cell.flavor_info(make_nova_cell.flavor(
        "p2", 2, 2048, **{"hw:cpu_policy": "dedicated"}))
    engine = sa.create_engine(url)
    try:
        tables.metadata.create_all(engine)
        with engine.begin() as connection:
            _insert(connection, tables.compute_nodes, [make_nova_cell.compute_row(
                n, f"cmp-{n}", f"cmp-{n}.example.org", node_uuid(n), stats=None)
                for n in range(1, nodes + 1)])
            rows = []
            for i in range(1, instances + 1):
                n = i % nodes + 1
                row = make_nova_cell.instance_row(i, instance_uuid(i), f"cmp-{n}",
                                                  f"cmp-{n}.example.org", 2, 2048)
                row["image_ref"] = "img-1"
                rows.append(row)
            _insert(connection, tables.instances, rows)
            _insert(connection, tables.instance_extra, [make_nova_cell.extra_row(
                i, instance_uuid(i), pinned if i % 10 == 0 else small)
                for i in range(1, instances + 1)])
            _insert(connection, tables.block_device_mapping, [
                {"id": i, "instance_uuid": instance_uuid(i), "boot_index": 0,
                 "destination_type": "volume", "deleted": 0}
                for i in range(20, instances + 1, 20)])
    finally:
        engine.dispose()


def seed_api(url: str, cell_url: str) -> None:
    engine = sa.create_engine(url)
    try:
        api_tables.metadata.create_all(engine)
        with engine.begin() as connection:
            connection.execute(api_tables.cell_mappings.insert(), [
                {"id": 1, "uuid": "00000000-0000-0000-0000-000000000000", "name": "cell0",
                 "database_connection": "none://", "transport_url": "none:///"},
                {"id": 2, "uuid": CELL1_UUID, "name": "cell1",
                 "database_connection": cell_url, "transport_url": "none:///"}])
    finally:
        engine.dispose()


def resources_of(index: int) -> dict[str, int]:
    held = dict(SMALL)
    if index % 10 == 0:
        held["PCPU"] = held.pop("VCPU")
    if index % 20 == 0:
        del held["DISK_GB"]
    return held


def seed_placement(url: str, nodes: int, instances: int, missing_every: int) -> int:
    """Every node a flat root, the allocations (see the module); how many are missing."""
    inventory = {"VCPU": {"total": 256}, "PCPU": {"total": 64},
                 "MEMORY_MB": {"total": 1048576}, "DISK_GB": {"total": 10000}}
    allocations: dict[int, dict[str, Any]] = {n: {} for n in range(1, nodes + 1)}
    missing = 0
    for i in range(1, instances + 1):
        if i % missing_every == 0:
            missing += 1
            continue
        n = i % nodes + 1
        owner = ("px", "ux") if i % 47 == 0 else ("p1", "u1")
        allocations[n][instance_uuid(i)] = {
            "allocations": {node_uuid(n): {"resources": resources_of(i)}},
            "project_id": owner[0], "user_id": owner[1]}
    with PlacementDirect(generate_deployment.direct_conf(url)):
        pass  # the schema
    engine = sa.create_engine(url)
    try:
        hosts = [FlatRows(node_uuid(n), f"cmp-{n}.example.org", inventory, [], allocations[n])
                 for n in range(1, nodes + 1)]
        for start in range(0, len(hosts), 500):
            with engine.begin() as connection:
                insert_flat_rows(connection, hosts[start:start + 500])
    finally:
        engine.dispose()
    return missing


@contextlib.contextmanager
def databases(engine: str, server: str | None, directory: str) -> Iterator[list[str]]:
    """Three empty databases: Placement's, nova's API database, the cell's."""
    if engine == "sqlite":
        yield [f"sqlite:///{directory}/{name}.sqlite" for name in ("placement", "api", "cell")]
        return
    with contextlib.ExitStack() as stack:
        base = server or bench_migrate.SERVERS[engine]
        yield [stack.enter_context(bench_migrate.throwaway_database(base)) for _ in range(3)]


def timed_run(argv: list[str], profile: str | None = None,
              name: str = "heal") -> tuple[int, float, float, str]:
    """Exit status, wall and CPU seconds of this process, and the output's end
    (``profile``: a directory for the run's cProfile, ``NAME.prof``)."""
    out, err = io.StringIO(), io.StringIO()
    start, cpu = time.monotonic(), time.process_time()
    with profile_run.profiled(profile, name):
        code = manage.main(["placement", "heal_allocations", *argv], out=out, err=err)
    return (code, round(time.monotonic() - start, 2), round(time.process_time() - cpu, 2),
            (out.getvalue() + err.getvalue())[-300:])


def bench(args: argparse.Namespace, directory: str) -> dict[str, Any]:
    with databases(args.engine, args.server, directory) as (placement, api, cell):
        start = time.monotonic()
        seed_cell(cell, args.nodes, args.instances)
        seed_api(api, cell)
        missing = seed_placement(placement, args.nodes, args.instances, args.missing_every)
        for url in (placement, api, cell):
            bench_migrate.analyze(url)
        seeded = time.monotonic() - start
        conf = os.path.join(directory, f"placement-{uuid.uuid4().hex[:6]}.conf")
        with open(conf, "w") as handle:
            handle.write(f"[placement_database]\nconnection = {placement}\n")
        argv = ["--nova-api-database", api, "--config-file", conf, "--skip-port-allocations"]
        load = os.getloadavg()[0]
        profile = getattr(args, "profile", None)
        dry_code, dry_seconds, dry_cpu, _ = timed_run([*argv, "--dry-run"], profile, "dry_run")
        code, seconds, cpu, tail = timed_run(argv, profile, "heal")
        again_code, again_seconds, again_cpu, _ = timed_run(argv, profile, "second_run")
    wrong_owner = sum(1 for i in range(47, args.instances + 1, 47) if i % args.missing_every)
    return {"engine": args.engine, "nodes": args.nodes, "instances": args.instances,
            "missing": missing, "wrong_owner": wrong_owner, "seed_seconds": round(seeded, 1),
            "load_average": round(load, 1),
            "dry_run_seconds": dry_seconds, "dry_run_cpu_seconds": dry_cpu,
            "dry_run_exit": dry_code,
            "heal_seconds": seconds, "heal_cpu_seconds": cpu, "heal_exit": code,
            "healed": int(tail.split(" instance(s) healed")[0].split()[-1])
            if " instance(s) healed" in tail else None,
            "second_run_seconds": again_seconds, "second_run_cpu_seconds": again_cpu,
            "second_run_exit": again_code}


def add_scale_arguments(parser: argparse.ArgumentParser) -> None:
    """``--nodes``, ``--instances``, ``--engine``, ``--server`` (also tools/bench_rebuild.py's)."""
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--instances", type=int, default=100000)
    parser.add_argument("--engine", choices=["sqlite", "postgresql", "mysql"],
                        default="sqlite")
    parser.add_argument("--server", help="database server URL (no database part)")


def printed(run: Any, args: argparse.Namespace, prefix: str) -> dict[str, Any]:
    """``run(args, directory)`` in a temporary directory; its report printed as JSON."""
    with tempfile.TemporaryDirectory(prefix=prefix) as directory:
        report = run(args, directory)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_scale_arguments(parser)
    parser.add_argument("--missing-every", type=int, default=10,
                        help="every N-th instance has no allocations (default 10)")
    parser.add_argument("--profile", metavar="DIR",
                        help="write each run's cProfile to DIR/NAME.prof")
    args = parser.parse_args(argv)
    report = printed(bench, args, "bench-heal-")
    ok = (report["heal_exit"] == 0 and report["second_run_exit"] == 4
          and report["dry_run_exit"] == 4
          and report["healed"] == report["missing"] + report["wrong_owner"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

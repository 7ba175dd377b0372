#!/usr/bin/env python3
"""Benchmark of the offline consistency commands on a cloud of N compute nodes.

Builds, with set-based inserts (not measured): a nova API database (cell0
and one cell, a host mapping per host, host aggregates: every host in
``az`` and in one of ``--aggregates`` others), the cell's database
(``--nodes`` compute nodes, ``--instances`` live instances per node, an
in-progress migration every 100 nodes) and Placement's (one flat root per
node holding its instances' allocations, plus one orphaned allocation on
every ``--orphan-every``-th node; every host's memberships present but on
every ``--missing-every``-th host). Then runs each command of
:data:`COMMANDS` as an operator would (``nova-reshape-manage`` in this
process, Placement in-process on its database through ``--config-file``,
nova's databases through ``--nova-config``), checks its exit status, and
reports wall and CPU seconds per command as JSON. Target (issue 23):
10,000 nodes and 100,000 instances, each command at most 60 s on
PostgreSQL. Not a test.

    python tools/bench_consistency.py                                  # SQLite, 1,000 nodes
    python tools/bench_consistency.py --engine postgresql --nodes 10000 --instances 10
    python tools/bench_consistency.py --engine mysql --nodes 10000 --instances 10

``--engine postgresql|mysql`` creates throwaway databases on the local
server (``--server`` to name another) and drops them at the end. A command
is added by writing a ``Command`` (its arguments and expected exit
statuses) into :data:`COMMANDS`; ``--commands`` picks some. ``preflight``
(first) times ``migrate_compute_inventory``'s consistency check alone, every
node covered: what it adds to the migration's pre-flight.
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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import bench_migrate  # noqa: E402
import flat_placement_rows  # noqa: E402
import generate_deployment  # noqa: E402
import make_nova_cell  # noqa: E402
import profile_run  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from nova_reshape.cmd import consistency_check, manage  # noqa: E402
from nova_reshape.cmd.placement_access import placement_opener  # noqa: E402
from nova_reshape.cmd.refusal import Refusal  # noqa: E402
from nova_reshape.cmd.request import MigrateRequest, NovaDatabase, PlacementAccess  # noqa: E402
from nova_reshape.consistency.preflight import CoveredNode  # noqa: E402
from nova_reshape.nova.conf.per_host import NovaConfigPaths  # noqa: E402
from nova_reshape.novadb import api_tables, tables  # noqa: E402
from placement_wsgi.db import tables as placement_tables  # noqa: E402

CELL_UUID = "ce110000-0000-4000-8000-00000000be01"
CELL0_UUID = "00000000-0000-0000-0000-000000000000"
CHUNK = 500


@dataclass(frozen=True)
class Command:
    """One timed run: the placement action, its arguments, the exit status it must give."""

    name: str
    action: str
    args: tuple[str, ...]
    expected: int


#: The runs, in order (each sees what the one before it wrote).
COMMANDS = (
    Command("audit", "audit", (), 3),
    Command("audit_delete", "audit", ("--delete",), 4),
    Command("audit_clean", "audit", (), 0),
    Command("sync_aggregates", "sync_aggregates", (), 0),
    Command("sync_aggregates_clean", "sync_aggregates", (), 0),
)


def uuid_of(kind: str, number: int) -> str:
    return generate_deployment.stable_uuid(0, f"{kind}-{number}")


@dataclass(frozen=True)
class Shape:
    nodes: int
    instances: int
    aggregates: int
    orphan_every: int
    missing_every: int

    def host(self, node: int) -> str:
        return f"cmp-{node:05d}"

    def aggregate_names(self, node: int) -> tuple[str, str]:
        return ("az", f"agg-{node % self.aggregates}")


def seed_nova(api_url: str, cell_url: str, shape: Shape) -> None:
    """The API and cell databases (schemas created) with the shape's rows."""
    cell = sa.create_engine(cell_url)
    try:
        tables.metadata.create_all(cell)
        with cell.begin() as connection:
            for start in range(0, shape.nodes, CHUNK):
                nodes = range(start, min(start + CHUNK, shape.nodes))
                connection.execute(tables.compute_nodes.insert(), [make_nova_cell.compute_row(
                    node + 1, shape.host(node), shape.host(node), uuid_of("node", node))
                    for node in nodes])
                connection.execute(tables.instances.insert(), [make_nova_cell.instance_row(
                    node * shape.instances + index + 1, uuid_of("instance", node * 1000 + index),
                    shape.host(node), shape.host(node), 2, 2048)
                    for node in nodes for index in range(shape.instances)])
            connection.execute(tables.migrations.insert(), [
                {"id": node + 1, "uuid": uuid_of("migration", node), "status": "finished",
                 "source_compute": shape.host(node), "source_node": shape.host(node),
                 "dest_compute": shape.host(node + 1), "dest_node": shape.host(node + 1),
                 "instance_uuid": uuid_of("instance", (node + 1) * 1000), "deleted": 0}
                for node in range(0, shape.nodes - 1, 100)])
    finally:
        cell.dispose()
    api = sa.create_engine(api_url)
    try:
        api_tables.metadata.create_all(api)
        with api.begin() as connection:
            connection.execute(api_tables.cell_mappings.insert(), [
                {"id": 1, "uuid": CELL0_UUID, "name": "cell0", "transport_url": "none:///",
                 "database_connection": cell_url},
                {"id": 2, "uuid": CELL_UUID, "name": "cell1", "transport_url": "none:///",
                 "database_connection": cell_url}])
            connection.execute(api_tables.host_mappings.insert(), [
                {"cell_id": 2, "host": shape.host(node)} for node in range(shape.nodes)])
            names = ["az"] + [f"agg-{number}" for number in range(shape.aggregates)]
            connection.execute(api_tables.aggregates.insert(), [
                {"id": number, "uuid": uuid_of("aggregate", number), "name": name}
                for number, name in enumerate(names, start=1)])
            ids = {name: number for number, name in enumerate(names, start=1)}
            connection.execute(api_tables.aggregate_hosts.insert(), [
                {"aggregate_id": ids[name], "host": shape.host(node)}
                for node in range(shape.nodes) for name in shape.aggregate_names(node)])
    finally:
        api.dispose()


def flat_host(node: int, shape: Shape) -> flat_placement_rows.FlatRows:
    root = uuid_of("node", node)
    consumers = [uuid_of("instance", node * 1000 + index) for index in range(shape.instances)]
    if node % shape.orphan_every == 0:
        consumers.append(uuid_of("orphan", node))
    inventory = {name: {"total": total, "min_unit": 1, "max_unit": total, "step_size": 1,
                        "reserved": 0, "allocation_ratio": 1.0}
                 for name, total in (("VCPU", 256), ("MEMORY_MB", 1 << 20), ("DISK_GB", 10000))}
    return flat_placement_rows.FlatRows(
        uuid=root, name=shape.host(node), inventories=inventory, traits=[],
        allocations={consumer: {"allocations": {root: {"resources": {
            "VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 10}}}, "project_id": "p1",
            "user_id": "u1", "consumer_generation": None} for consumer in consumers})


def seed_placement(url: str, shape: Shape) -> None:
    """Placement's database: flat roots, allocations, and the memberships not missing."""
    database = generate_deployment.open_database(url)
    try:
        for start in range(0, shape.nodes, CHUNK):
            database.write(flat_placement_rows.insert_flat_rows, [
                flat_host(node, shape) for node in range(start, min(start + CHUNK, shape.nodes))])
        database.write(_memberships, shape)
    finally:
        database.dispose()


def _memberships(connection: Any, shape: Shape) -> None:
    names = ["az"] + [f"agg-{number}" for number in range(shape.aggregates)]
    aggregates, links = (placement_tables.placement_aggregates,
                         placement_tables.resource_provider_aggregates)
    connection.execute(aggregates.insert(), [
        {"uuid": uuid_of("aggregate", number)} for number in range(1, len(names) + 1)])
    aggregate_ids = dict(connection.execute(sa.select(aggregates.c.uuid, aggregates.c.id)).all())
    providers = placement_tables.resource_providers
    provider_ids = dict(connection.execute(sa.select(providers.c.uuid, providers.c.id)).all())
    number_of = {name: number for number, name in enumerate(names, start=1)}
    connection.execute(links.insert(), [
        {"resource_provider_id": provider_ids[uuid_of("node", node)],
         "aggregate_id": aggregate_ids[uuid_of("aggregate", number_of[name])]}
        for node in range(shape.nodes) if node % shape.missing_every
        for name in shape.aggregate_names(node)])


@contextlib.contextmanager
def databases(engine: str, server: str | None, directory: str) -> Iterator[list[str]]:
    """Three new empty databases (Placement, API, cell) on ``engine``."""
    if engine == "sqlite":
        yield [f"sqlite:///{directory}/{name}.sqlite" for name in ("placement", "api", "cell")]
        return
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(bench_migrate.throwaway_database(
            server or bench_migrate.SERVERS[engine])) for _ in range(3)]


def run(command: Command, placement_conf: str, nova_conf: str,
        profile: str | None = None) -> dict[str, Any]:
    """One command's figures; raises when its exit status is not the expected one.
    ``profile``: a directory for its cProfile (``NAME.prof``)."""
    out, err = io.StringIO(), io.StringIO()
    start, cpu = time.monotonic(), time.process_time()
    with profile_run.profiled(profile, command.name):
        code = manage.main(["--config-file", placement_conf, "placement", command.action,
                            "--nova-config", nova_conf, *command.args], out=out, err=err)
    wall, used = time.monotonic() - start, time.process_time() - cpu
    if code != command.expected:
        raise SystemExit(f"{command.name}: exit {code}, expected {command.expected}: "
                         f"{out.getvalue()[-500:]}{err.getvalue()[-500:]}")
    return {f"{command.name}_seconds": round(wall, 2),
            f"{command.name}_cpu_seconds": round(used, 2),
            f"{command.name}_says": out.getvalue().strip().splitlines()[-1]}


def preflight(placement_conf: str, nova_conf: str, shape: Shape) -> dict[str, Any]:
    """The time ``migrate_compute_inventory``'s consistency check adds to its pre-flight
    (from nova's API database, every node covered): nova read again, Placement read,
    the findings; one orphan per ``--orphan-every`` nodes must refuse it."""
    request = MigrateRequest(placement=PlacementAccess(config_files=(placement_conf,)),
                             hosts=NovaDatabase(), nova_configs=(nova_conf,))
    nodes = [CoveredNode(shape.host(node), uuid_of("node", node), shape.host(node))
             for node in range(shape.nodes)]
    opener = placement_opener(request.placement, NovaConfigPaths(request.nova_configs))
    start, cpu = time.monotonic(), time.process_time()
    try:
        consistency_check.run(request, opener, nodes, io.StringIO())
        found = 0
    except Refusal as refusal:
        found = len(refusal.findings)
    wall, used = time.monotonic() - start, time.process_time() - cpu
    expected = len(range(0, shape.nodes, shape.orphan_every))
    if found != expected:
        raise SystemExit(f"preflight: {found} finding(s), expected {expected}")
    return {"preflight_seconds": round(wall, 2), "preflight_cpu_seconds": round(used, 2),
            "preflight_findings": found}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--instances", type=int, default=10, help="instances per node")
    parser.add_argument("--aggregates", type=int, default=10)
    parser.add_argument("--orphan-every", type=int, default=10)
    parser.add_argument("--missing-every", type=int, default=10)
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "mysql"), default="sqlite")
    parser.add_argument("--server", help="server URL without database for --engine")
    parser.add_argument("--commands",
                        default=",".join(["preflight", *(c.name for c in COMMANDS)]),
                        help="comma-separated names of the runs to time, in order")
    parser.add_argument("--profile", metavar="DIR",
                        help="write each command's cProfile to DIR/NAME.prof")
    args = parser.parse_args(argv)
    shape = Shape(args.nodes, args.instances, args.aggregates, args.orphan_every,
                  args.missing_every)
    wanted = args.commands.split(",")
    report: dict[str, Any] = {"engine": args.engine, "nodes": args.nodes,
                              "instances": args.nodes * args.instances}
    with tempfile.TemporaryDirectory(prefix="bench-consistency-") as directory, \
            databases(args.engine, args.server, directory) as (placement, api, cell):
        start = time.monotonic()
        seed_nova(api, cell, shape)
        seed_placement(placement, shape)
        bench_migrate.analyze(placement)
        bench_migrate.analyze(cell)
        report["generate_seconds"] = round(time.monotonic() - start, 1)
        placement_conf = os.path.join(directory, "placement.conf")
        generate_deployment.write_config(placement_conf, placement)
        nova_conf = os.path.join(directory, "nova.conf")
        with open(nova_conf, "w", encoding="utf-8") as stream:
            stream.write(f"[api_database]\nconnection = {api}\n"
                         f"[database]\nconnection = {cell}\n")
        if "preflight" in wanted:  # before the audit deletes the orphans
            report.update(preflight(placement_conf, nova_conf, shape))
        report["load_average"] = round(os.getloadavg()[0], 1)
        for command in COMMANDS:
            if command.name in wanted:
                report.update(run(command, placement_conf, nova_conf, args.profile))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

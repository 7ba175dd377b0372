#!/usr/bin/env python3
"""Benchmark of ``placement rebuild``: N compute nodes, M instances, into an empty Placement.

Builds nova's API database (cell0 and one cell) and the cell's database as
tools/bench_heal.py does (N compute nodes, M instances with their embedded
flavors, every 10th pinned, every 20th volume-backed; set-based inserts,
not measured) and an empty, synced Placement database. Then it times the
rebuild as an operator runs it (``nova-reshape-manage`` in-process,
PlacementDirect on the database) and a heal_allocations afterwards (nothing
to do, exit 4), and reports wall seconds, this process's CPU seconds (the
database server's are not in them), the rebuild's summary line and the
load average when the runs started. Target (issue 23): 10,000 nodes and
100,000 instances in at most 60 s on PostgreSQL. ``--requests-path`` times
the rebuild through Placement's requests instead of its set-based path (the
"before"); ``--profile N`` prints the N costliest functions of the rebuild
(cProfile, cumulative) on stderr; ``--revert`` then times ``placement
revert`` of the rebuild's run (and says what it left). Not a test.

    python tools/bench_rebuild.py --nodes 100 --instances 1000
    python tools/bench_rebuild.py --engine postgresql --nodes 10000 --instances 100000
    python tools/bench_rebuild.py --engine postgresql --nodes 1000 --instances 10000 \
        --requests-path --profile 30
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
import uuid
from typing import Any

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import bench_heal  # noqa: E402
import bench_migrate  # noqa: E402
import generate_deployment  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from nova_reshape import journal  # noqa: E402
from nova_reshape.cmd import manage, rebuild_bulk  # noqa: E402
from nova_reshape.novadb import tables  # noqa: E402
from placement_wsgi.db import importer  # noqa: E402
from placement_wsgi.direct import PlacementDirect  # noqa: E402


def seed_services(url: str, nodes: int) -> None:
    """One nova-compute service per node's host (describe reads hosts by service)."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            rows = [{"id": n, "host": f"cmp-{n}", "binary": "nova-compute",
                     "topic": "compute", "disabled": n == 1, "deleted": 0, "version": 66}
                    for n in range(1, nodes + 1)]
            for start in range(0, len(rows), bench_heal.CHUNK):
                connection.execute(tables.services.insert(),
                                   rows[start:start + bench_heal.CHUNK])
    finally:
        engine.dispose()


def timed(argv: list[str], profile: int = 0,
          before: tuple[str, ...] = ()) -> tuple[int, float, float, str]:
    """Exit status, wall and CPU seconds of this process, and the output's end;
    ``profile``: print that many of the costliest functions on stderr; ``before``:
    global options (before the category)."""
    out, err = io.StringIO(), io.StringIO()
    profiler = cProfile.Profile() if profile else None
    start, cpu = time.monotonic(), time.process_time()
    if profiler:
        profiler.enable()
    code = manage.main([*before, "placement", *argv], out=out, err=err)
    if profiler:
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(profile)
    return (code, round(time.monotonic() - start, 2), round(time.process_time() - cpu, 2),
            (out.getvalue() or err.getvalue())[-300:])


def bench(args: argparse.Namespace, directory: str) -> dict[str, Any]:
    with bench_heal.databases(args.engine, args.server, directory) as (placement, api, cell):
        bench_heal.seed_cell(cell, args.nodes, args.instances)
        seed_services(cell, args.nodes)
        bench_heal.seed_api(api, cell)
        with PlacementDirect(generate_deployment.direct_conf(placement)):
            pass  # the schema, empty
        for url in (api, cell):
            bench_migrate.analyze(url)
        conf = os.path.join(directory, f"placement-{uuid.uuid4().hex[:6]}.conf")
        with open(conf, "w") as handle:
            handle.write(f"[placement_database]\nconnection = {placement}\n")
        nova_conf = os.path.join(directory, "nova.conf")
        with open(nova_conf, "w") as handle:  # every 10th instance is pinned, on few nodes
            handle.write("[compute]\ncpu_shared_set = 0-7\ncpu_dedicated_set = 8-31\n")
        argv = ["--nova-api-database", api, "--config-file", conf]
        load = os.getloadavg()[0]
        if args.requests_path:
            rebuild_bulk.decide = lambda *unused: None  # the requests' path
        code, seconds, cpu, tail = timed(["rebuild", *argv, "--nova-config", nova_conf],
                                         args.profile)
        again, again_seconds, _, _ = timed(["heal_allocations", *argv,
                                            "--skip-port-allocations"])
        reverted = timed_revert(conf, placement) if args.revert else {}
    return {"engine": args.engine, "nodes": args.nodes, "instances": args.instances,
            "path": "requests" if args.requests_path else "set-based",
            "load_average": round(load, 1), "rebuild_seconds": seconds,
            "rebuild_cpu_seconds": cpu, "rebuild_exit": code,
            "summary": next((line for line in tail.splitlines() if "tree(s) built" in line),
                            tail.strip().splitlines()[-1]),
            "heal_after_seconds": again_seconds, "heal_after_exit": again, **reverted}


def timed_revert(conf: str, url: str) -> dict[str, Any]:
    """``placement revert`` of the rebuild's run: its wall and CPU seconds, exit status,
    and the providers and consumers left (none when it emptied Placement)."""
    engine = sa.create_engine(url)
    try:
        [run] = journal.list_runs(engine)
        code, seconds, cpu, _ = timed(["revert", run.id], before=("--config-file", conf))
        left = importer.data_held(engine)
    finally:
        engine.dispose()
    return {"revert_seconds": seconds, "revert_cpu_seconds": cpu, "revert_exit": code,
            "left_after_revert": left}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_heal.add_scale_arguments(parser)
    parser.add_argument("--requests-path", action="store_true",
                        help="the rebuild through Placement's requests (the path before)")
    parser.add_argument("--revert", action="store_true",
                        help="then time placement revert of the rebuild's run (the "
                        "set-based path's; its CPU includes the revert's workers' startup)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print the N costliest functions of the rebuild (cProfile)")
    report = bench_heal.printed(bench, parser.parse_args(argv), "bench-rebuild-")
    reverted = report.get("revert_exit", 0) == 0 and not report.get("left_after_revert")
    return 0 if report["rebuild_exit"] == 0 and report["heal_after_exit"] == 4 \
        and reverted else 1


if __name__ == "__main__":
    sys.exit(main())

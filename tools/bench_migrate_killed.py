#!/usr/bin/env python3
"""The offline migration killed with SIGKILL mid-run at scale, then run again.

Seeds the benchmark deployment (``tools/bench_migrate.py``'s: N nodes x G
GPUs x M instances, flat shape), records every consumer's allocated amount
per resource class, then runs the real command,
``nova-reshape-manage placement migrate_compute_inventory``, as a
subprocess in its own process group and kills the whole group (parent and
workers) with SIGKILL ``--kill-after`` seconds after its start (pick a
time inside the write phase: bench_migrate reports the check phase's). It then
runs the command again to completion and a third time, and checks what
the operator relies on:

* the second run exits 0 and every node ends ``migrated`` or
  ``unchanged`` (the killed run's nodes are untouched or complete);
* the third run finds every node ``unchanged``: nothing is written twice;
* every consumer holds exactly what it held before, per resource class
  (set-based sums over the allocations table, before and after);
* every node has exactly its root and one provider per GPU.

Prints a JSON report and exits non-zero when a check fails. A benchmark
run by hand, not a test (the kill-and-rerun tests cover the same contract
on small deployments).

    python tools/bench_migrate_killed.py --nodes 10000 --engine postgresql --kill-after 60
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import IO

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import bench_migrate  # noqa: E402
import generate_deployment  # noqa: E402
import process_peaks  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from placement_wsgi.db import tables  # noqa: E402

#: The command, run by this interpreter (the project's virtualenv).
COMMAND = (sys.executable, "-m", "nova_reshape.cmd.manage")


def held_amounts(database: str) -> dict[tuple[str, int], int]:
    """(consumer uuid, resource class id) -> amount allocated, in one grouped query."""
    allocations = tables.allocations
    engine = sa.create_engine(database)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.select(allocations.c.consumer_id, allocations.c.resource_class_id,
                          sa.func.sum(allocations.c.used))
                .group_by(allocations.c.consumer_id, allocations.c.resource_class_id))
            return {(consumer, class_id): int(amount) for consumer, class_id, amount in rows}
    finally:
        engine.dispose()


def providers_per_root(database: str) -> dict[int, int]:
    """Tree size (providers under one root, the root included) -> how many trees."""
    providers = tables.resource_providers
    engine = sa.create_engine(database)
    try:
        with engine.connect() as connection:
            sizes = connection.execute(
                sa.select(sa.func.count()).select_from(providers)
                .group_by(providers.c.root_provider_id)).scalars()
            counts: dict[int, int] = {}
            for size in sizes:
                counts[size] = counts.get(size, 0) + 1
            return counts
    finally:
        engine.dispose()


def command(config: str, hosts: str) -> list[str]:
    return [*COMMAND, "--config-file", config, "placement", "migrate_compute_inventory",
            "--host-file", hosts, "--format", "json"]


def run_to_end(config: str, hosts: str) -> dict[str, object]:
    """Run the command to its end; its report goes to a file read for its summary
    only (a JSON report of 50,000 nodes is gigabytes: held here it would be this
    tool's memory, not the command's)."""
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as output, tempfile.TemporaryFile("w+") as errors:
        done = process_peaks.run_sampled(command(config, hosts), stdout=output, stderr=errors,
                                         text=True)
        output.seek(0)
        summary = summary_of(output)
        errors.seek(0)
        error = errors.read().strip().splitlines()[-1:] if done.returncode else []
    return {"exit_code": done.returncode, "seconds": round(time.monotonic() - start, 1),
            "summary": summary,
            # The largest of the command's processes (parent or worker) in this run.
            "peak_rss_mb": done.peak_rss_mb,
            "error": error}


def summary_of(report: IO[str]) -> dict[str, int] | None:
    """The ``summary`` of the command's JSON report, parsed alone: the report
    ends with it (``"summary": {...}`` after the nodes)."""
    text = report.read()
    at = text.rfind('"summary"')
    if at < 0:
        return None
    return json.JSONDecoder().raw_decode(text, text.index("{", at))[0]


def run_killed(config: str, hosts: str, kill_after: float) -> dict[str, object]:
    """Start the command, SIGKILL its whole process group after ``kill_after`` s."""
    done = process_peaks.run_sampled(command(config, hosts), timeout=kill_after,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
    if done.killed:
        return {"killed": True, "after_seconds": kill_after, "peak_rss_mb": done.peak_rss_mb}
    return {"killed": False, "exit_code": done.returncode, "peak_rss_mb": done.peak_rss_mb}


@contextlib.contextmanager
def deployment(engine: str, directory: str, server: str | None) -> Iterator[str]:
    if engine == "sqlite":
        yield f"sqlite:///{os.path.join(directory, 'bench.sqlite')}"
        return
    with bench_migrate.throwaway_database(server or bench_migrate.SERVERS[engine]) as url:
        yield url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--instances", type=int, default=16)
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "mysql"), default="sqlite")
    parser.add_argument("--server", help="server URL without database for --engine "
                        "(default: the local PostgreSQL or MariaDB on 127.0.0.1)")
    parser.add_argument("--kill-after", type=float, default=20.0, metavar="SECONDS",
                        help="seconds after the start of the command to kill it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-killed-") as directory, \
            deployment(args.engine, directory, args.server) as database:
        hosts = os.path.join(directory, "hosts")
        bench_migrate.seed(database, hosts, args.nodes, args.gpus, args.instances, (), False)
        config = os.path.join(directory, "placement.conf")
        generate_deployment.write_config(config, database)
        before = held_amounts(database)
        killed = run_killed(config, hosts, args.kill_after)
        after_kill = held_amounts(database)
        second = run_to_end(config, hosts)
        third = run_to_end(config, hosts)
        after = held_amounts(database)
        trees = providers_per_root(database)
    checks = {
        "second_run_completes": second["exit_code"] == 0 and set(second["summary"] or {})
        <= {"migrated", "unchanged"},
        "third_run_all_unchanged": third["exit_code"] == 0
        and third["summary"] == {"unchanged": args.nodes},
        "allocations_held_after_the_kill": after_kill == before,
        "allocations_held_at_the_end": after == before,
        "every_tree_root_plus_one_per_gpu": trees == {1 + args.gpus: args.nodes},
    }
    report = {"engine": args.engine, "nodes": args.nodes, "gpus": args.gpus,
              "instances_per_node": args.instances, "killed_run": killed,
              "second_run": second, "third_run": third, "trees": trees, "checks": checks}
    print(json.dumps(report, indent=2, default=str))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

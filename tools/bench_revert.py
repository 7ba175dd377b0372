#!/usr/bin/env python3
"""Benchmark of the journal and the revert: N compute nodes x G GPUs x M instances.

Builds the same flat deployment twice (tools/generate_deployment.py, bulk
inserts; not measured), then:

1. migrates the first copy without a journal (what the migration cost
   before the journal existed);
2. migrates the second copy as ``migrate_compute_inventory`` does now: a
   journaled run, each node's entry written in its transaction;
3. reverts the second copy with ``nova-reshape-manage placement revert``
   (itself journaled), and checks that every node was reverted.

Reported: the wall time and the CPU time (this process and its workers;
not the database server's) of each, the journal's cost (2 against 1, in
per cent of 1) and the revert against the journaled migration, plus the
journal's size. On a loaded machine the wall times wander by more than the
journal costs; the CPU figures are the steadier measure there. Targets
(issue 26): at 10,000 nodes the journal costs at most 10 % of the
migration's time and the revert takes no longer than the
migration. Both migrations run with the same worker count (the command's
choice by default, ``--workers``); the revert takes the command's own
choice. Not a test.

    python tools/bench_revert.py                          # 1,000 nodes, SQLite files
    python tools/bench_revert.py --nodes 200 --kinds numa,pci,accelerators
    python tools/bench_revert.py --engine postgresql --nodes 10000
    python tools/bench_revert.py --engine mysql --nodes 1000 --check-dump

With ``--workers 1`` the migration runs in this process and the time spent
in the journal's own calls (the two snapshots per node, "before" as planned
from and "after" from the check's read in the transaction, and the entries'
insert, one per group of nodes written together) is measured directly
(``journal_calls_*``): a figure the machine's load does not blur.

``--check-dump`` also compares a normalized dump of every Placement table
before the migration and after the revert (slow at large sizes). On a
shared machine, run it when the machine is quiet and note the load
(``os.getloadavg()`` is printed).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import bench_migrate  # noqa: E402
import generate_deployment  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from nova_reshape import journal  # noqa: E402
from nova_reshape.cmd import manage  # noqa: E402
from nova_reshape.compute import migrate, parallel, writers  # noqa: E402
from nova_reshape.journal import schema, store  # noqa: E402
from nova_reshape.virt.host import load_hosts  # noqa: E402
from placement_wsgi.db.database import Database  # noqa: E402


@contextlib.contextmanager
def databases(engine: str, server: str | None, directory: str) -> Iterator[list[str]]:
    """Two empty databases of ``engine`` (SQLite files in ``directory``)."""
    if engine == "sqlite":
        yield [f"sqlite:///{os.path.join(directory, f'{name}.sqlite')}"
               for name in ("plain", "journaled")]
        return
    with bench_migrate.throwaway_database(server or bench_migrate.SERVERS[engine]) as first, \
            bench_migrate.throwaway_database(server or bench_migrate.SERVERS[engine]) as second:
        yield [first, second]


def migrate_copy(database: str, directory: str, workers: int,
                 journaled: bool) -> tuple[float, float, list[migrate.NodeResult], str | None]:
    """Migrate one copy (its own host files): wall and CPU seconds (this process and
    its workers), results, the journal run's id."""
    hosts = load_hosts([os.path.join(directory, "hosts")])
    config = os.path.join(directory, "placement.conf")
    generate_deployment.write_config(config, database)
    opener = parallel_opener(config)
    start, cpu = time.monotonic(), os.times()
    with contextlib.ExitStack() as stack:
        run_id = None
        if journaled:
            opened = Database(database)
            stack.callback(opened.dispose)
            run = stack.enter_context(journal.recording(
                opened.engine, "migrate_compute_inventory", "bench_revert", {}))
            run_id = run.run_id
        settings = migrate.Settings(journal=run_id)
        if workers > 1:
            results = parallel.ParallelMigration(opener, hosts, workers, settings).run()
        else:
            with opener() as placement:
                results = migrate.Migration(placement, hosts, settings).run()
    return time.monotonic() - start, bench_migrate.cpu_seconds_since(cpu), results, run_id


class JournalTimer:
    """Time spent in the journal's calls inside the migration's writer (one process
    only: workers are other processes): snapshots, and the entries' inserts (one
    per node written alone, one per group written together)."""

    NAMES = ((writers, "of_tree"), (writers, "of_state"), (writers, "record_node"),
             (store, "record_nodes"))

    def __init__(self) -> None:
        self.cpu = self.wall = 0.0

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.cpu += time.process_time() - cpu
                self.wall += time.perf_counter() - wall
        return timed

    @contextlib.contextmanager
    def installed(self) -> Iterator[JournalTimer]:
        saved = {(module, name): getattr(module, name) for module, name in self.NAMES}
        for (module, name), function in saved.items():
            setattr(module, name, self.wrap(function))
        try:
            yield self
        finally:
            for (module, name), function in saved.items():
                setattr(module, name, function)


def parallel_opener(config: str) -> parallel.Opener:
    """What opens the copy in-process (in each worker), as the command does."""
    return functools.partial(manage.open_database, [config])


def journal_size(database: str) -> dict[str, float]:
    """Entries and the bytes of their snapshots."""
    engine = sa.create_engine(database)
    try:
        with engine.connect() as connection:
            nodes = schema.nodes
            count, size = connection.execute(sa.select(
                sa.func.count(), sa.func.sum(sa.func.length(nodes.c.before)
                                             + sa.func.length(nodes.c.after)))).one()
    finally:
        engine.dispose()
    return {"journal_entries": count, "journal_kib_per_node": round((size or 0) / 1024
                                                                   / max(count, 1), 1)}


def revert(directory: str, run_id: str) -> tuple[float, float, int, str]:
    """``placement revert RUN_ID`` on the journaled copy: wall and CPU seconds, exit
    status, output."""
    out, err = io.StringIO(), io.StringIO()
    start, cpu = time.monotonic(), os.times()
    code = manage.main(["--config-file", os.path.join(directory, "placement.conf"), "placement",
                        "revert", run_id], out=out, err=err)
    return (time.monotonic() - start, bench_migrate.cpu_seconds_since(cpu), code,
            out.getvalue() + err.getvalue())


def bench(args: argparse.Namespace, kinds: tuple[str, ...], workers: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-revert-") as directory, \
            databases(args.engine, args.server, directory) as (plain, journaled):
        dirs = [os.path.join(directory, name) for name in ("plain", "journaled")]
        for database, where in zip((plain, journaled), dirs, strict=True):
            os.makedirs(where)
            bench_migrate.seed(database, os.path.join(where, "hosts"), args.nodes, args.gpus,
                               args.instances, kinds, through_api=False)
        before = None
        if args.check_dump:
            from tests.fixtures.placement_dump import normalized_dump
            before = normalized_dump(journaled)
        plain_seconds, plain_cpu, plain_results, _ = migrate_copy(plain, dirs[0], workers,
                                                                  False)
        with JournalTimer().installed() as timer:
            seconds, cpu, results, run_id = migrate_copy(journaled, dirs[1], workers, True)
        size = journal_size(journaled)
        revert_seconds, revert_cpu, code, output = revert(dirs[1], run_id or "")
        report: dict[str, object] = {
            "database": args.engine, "nodes": args.nodes, "gpus": args.gpus,
            "instances_per_node": args.instances, "kinds": list(kinds) or ["gpus only"],
            "workers": workers, "load_average": [round(x, 2) for x in os.getloadavg()],
            "migrate_seconds_without_journal": round(plain_seconds, 1),
            "migrate_seconds_with_journal": round(seconds, 1),
            "journal_cost_percent": round(100 * (seconds - plain_seconds) / plain_seconds, 1),
            "revert_seconds": round(revert_seconds, 1),
            "revert_over_migrate_percent": round(100 * revert_seconds / seconds, 1),
            "revert_ms_per_node": round(1000 * revert_seconds / args.nodes, 2),
            "migrate_cpu_seconds_without_journal": round(plain_cpu, 1),
            "migrate_cpu_seconds_with_journal": round(cpu, 1),
            "journal_cost_cpu_percent": round(100 * (cpu - plain_cpu) / plain_cpu, 1),
            "revert_cpu_seconds": round(revert_cpu, 1),
            **({"journal_calls_cpu_seconds": round(timer.cpu, 2),
                "journal_calls_share_of_migrate_cpu_percent": round(100 * timer.cpu / cpu, 1),
                "journal_calls_wall_seconds": round(timer.wall, 2),
                "journal_calls_share_of_migrate_wall_percent": round(
                    100 * timer.wall / seconds, 1)} if workers == 1 else {}),
            "revert_over_migrate_cpu_percent": round(100 * revert_cpu / cpu, 1),
            **size,
            "outcome": {"plain": migrate.summarize(plain_results),
                        "journaled": migrate.summarize(results),
                        "revert_exit": code,
                        "reverted": output.count(": reverted")},
        }
        if before is not None:
            from tests.fixtures.placement_dump import normalized_dump
            report["dump_after_revert_equals_before"] = normalized_dump(journaled) == before
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_migrate.deployment_arguments(parser)
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "mysql"), default="sqlite")
    parser.add_argument("--server", help="server URL without database for --engine "
                        "(default: the local PostgreSQL or MariaDB on 127.0.0.1)")
    parser.add_argument("--workers", type=int,
                        help="worker processes of both migrations (default: the command's "
                        "choice, parallel.auto_workers)")
    parser.add_argument("--check-dump", action="store_true",
                        help="also compare every Placement table before and after")
    args = parser.parse_args(argv)
    kinds = tuple(kind for kind in args.kinds.split(",") if kind)
    workers = args.workers or parallel.auto_workers(args.nodes)
    report = bench(args, kinds, workers)
    print(json.dumps(report, indent=2))
    outcome = report["outcome"]
    assert isinstance(outcome, dict)
    ok = (outcome["plain"] == outcome["journaled"] == {"migrated": args.nodes}
          and outcome["revert_exit"] == 0 and outcome["reverted"] == args.nodes
          and report.get("dump_after_revert_equals_before", True))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

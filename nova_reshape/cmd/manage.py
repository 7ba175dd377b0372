"""``nova-reshape-manage``: the offline fast-forward-upgrade reshape.

::

    nova-reshape-manage [--config-file FILE]... placement migrate_compute_inventory \\
        (--host-file PATH... | --nova-database URL [--collected DIR] \\
        [--cyborg-database URL]) [--dry-run] [--verbose] \\
        [--format text|json] [--progress] [--workers N] [--target-release RELEASE] \\
        [--numa-in-placement] [--nova-config FILE]... [--allow-vgpu-mismatch]
    nova-reshape-manage placement migrate_compute_inventory --host-file PATH ... \\
        [--nova-config FILE]... --print-nova-config
    nova-reshape-manage placement migrate_compute_inventory \\
        --placement-url URL [--token TOKEN] [--header NAME:VALUE] --host-file PATH ...
    nova-reshape-manage placement describe_hosts --nova-database URL --output DIR ...
    nova-reshape-manage host collect --output FILE ...

For every non-ironic node of the described hosts (docs/host-description.md)
the resource tracker's start-up update runs with the described devices'
shims as virt driver: nodes still in the flat shape get their inventory and
allocations moved to child providers in one atomic ``POST /reshaper``
each. With ``--config-file`` (its ``[placement_database] connection``) the
Placement application runs in-process on the database through
PlacementDirect, so every service can be down; with ``--placement-url`` a
running Placement is used instead. See docs/migrate-compute-inventory.md.

Exit status:

* 0 - done, or nothing to do (every node already in the new shape);
* 1 - a node failed (Placement refused a write, could not be reached, ...);
* 2 - bad input: command line, host file or configuration;
* 3 - pre-flight refused: findings listed, nothing written;
* 4 - generation conflicts remained on some node after the retries
  (another writer is active); the other nodes are done, run again;
* 5 - an invariant was violated after a node was written; the run stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

import requests
import sqlalchemy as sa

from nova_reshape import exception
from nova_reshape.cmd import collect, describe, from_nova, render
from nova_reshape.compute import conf_check, migrate, parallel
from nova_reshape.nova_conf import NovaConfError, load_nova_conf
from nova_reshape.progress import progress_callback
from nova_reshape.transport import http_placement, open_direct
from nova_reshape.virt import releases
from nova_reshape.virt.described import nodes_of
from nova_reshape.virt.host import HostDescriptionError, load_hosts

PROGRAM = "nova-reshape-manage"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_REFUSED = 3
EXIT_CONFLICT = 4
EXIT_INVARIANT = 5


class BadInput(Exception):
    """Command line or configuration unusable (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2 itself; keep the format
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The command line (also used by the tests)."""
    parser = _Parser(prog=PROGRAM, description="Offline reshape of compute provider trees.")
    parser.add_argument("--config-file", action="append", metavar="FILE", dest="config_files",
                        default=[], help="placement configuration with [placement_database] "
                        "connection; repeatable, later files win")
    categories = parser.add_subparsers(dest="category", metavar="CATEGORY", required=True)
    placement = categories.add_parser("placement", help="Placement data commands")
    actions = placement.add_subparsers(dest="action", metavar="ACTION", required=True)
    migrate_parser = actions.add_parser(
        "migrate_compute_inventory",
        help="move every described node's inventory and allocations to the nested shape")
    migrate_parser.add_argument(
        "--config-file", action="append", metavar="FILE", dest="sub_config_files", default=[],
        help="as the global --config-file")
    migrate_parser.add_argument("--placement-url", metavar="URL",
                                help="use a running Placement service instead of the database")
    migrate_parser.add_argument("--token", metavar="TOKEN",
                                help="x-auth-token for --placement-url")
    migrate_parser.add_argument(
        "--header", action="append", metavar="NAME:VALUE", dest="headers", default=[],
        help="extra header for --placement-url, e.g. 'X-Roles: admin,service' for a "
        "noauth2 service (the reshaper needs the service role); repeatable")
    hosts_from = migrate_parser.add_mutually_exclusive_group(required=True)
    hosts_from.add_argument(
        "--host-file", action="append", metavar="PATH", dest="host_files",
        help="host description file, or a directory of *.yaml files; repeatable")
    from_nova.add_arguments(migrate_parser, hosts_from)
    migrate_parser.add_argument("--dry-run", action="store_true",
                                help="check and show each node's trees and allocation moves; "
                                "change nothing")
    migrate_parser.add_argument("--verbose", "-v", action="store_true",
                                help="show trees and moves of every node, and log progress")
    migrate_parser.add_argument("--format", choices=("text", "json"), default="text",
                                help="output format (default text)")
    migrate_parser.add_argument(
        "--workers", type=_workers, metavar="N",
        help="worker processes migrating nodes side by side (default: one per CPU and "
        f"per {parallel.NODES_PER_WORKER} nodes, at most {parallel.MAX_AUTO_WORKERS})")
    migrate_parser.add_argument("--progress", action="store_true",
                                help="show progress bars even when stderr is not a "
                                "terminal or with --format json")
    migrate_parser.add_argument(
        "--target-release", type=_release, default=releases.DEFAULT_TARGET, metavar="RELEASE",
        help="the nova release about to start (number, series or name; default "
        f"{releases.DEFAULT_TARGET.number}, {releases.DEFAULT_TARGET.series}): only the "
        "reshapes its compute performs are done")
    migrate_parser.add_argument(
        "--numa-in-placement", action="store_true",
        help="make one child provider per NUMA cell holding its CPUs and memory (no nova "
        "release does this; only for a driver that models NUMA in Placement)")
    migrate_parser.add_argument(
        "--nova-config", action="append", metavar="FILE", dest="nova_configs", default=[],
        help="the target release's nova.conf (repeatable, later files win): fills what the "
        "host files leave out; where they disagree the node is refused")
    migrate_parser.add_argument(
        "--print-nova-config", action="store_true",
        help="print, per node, the nova.conf options the target release needs for the "
        "migrated tree, and exit (no Placement access)")
    migrate_parser.add_argument(
        "--allow-vgpu-mismatch", action="store_true",
        help="where a consumer's mediated devices do not add up to its VGPU allocation, "
        "move what is counted (as nova does, with a warning) instead of refusing")
    describe.add_parser(actions)
    collect.add_parser(categories)
    return parser


@contextlib.contextmanager
def open_http(url: str, token: str | None, headers: dict[str, str]) -> Iterator[Any]:
    """A requests-based client of the Placement service at ``url``."""
    client = http_placement(url, token=token, headers=headers)
    try:
        yield client
    finally:
        client.close()


@contextlib.contextmanager
def open_database(config_files: Sequence[str]) -> Iterator[Any]:
    """The Placement application in-process on the configured database."""
    with open_direct(_database_conf(config_files)) as client:
        yield client


def _database_conf(config_files: Sequence[str]) -> Any:
    from oslo_config import cfg

    from placement_wsgi import conf as placement_conf
    try:
        conf = placement_conf.load_config(config_files=list(config_files))
    except cfg.Error as error:
        raise BadInput(f"configuration: {error}") from error
    if not conf.placement_database.connection:
        raise BadInput("configuration: [placement_database] connection is not set in "
                       + ", ".join(config_files))
    return conf


def placement_opener(config_files: Sequence[str], url: str | None, token: str | None,
                     headers: Sequence[str] = ()) -> parallel.Opener:
    """What opens the transport the options ask for (in each worker); BadInput when unusable.

    The configuration is loaded and checked here, once, so a bad one is
    reported before any worker starts.
    """
    if url and config_files:
        raise BadInput("give either --config-file or --placement-url, not both")
    if headers and not url:
        raise BadInput("--header only applies to --placement-url")
    if url:
        fixed = {}
        for header in headers:
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                raise BadInput(f"--header {header!r} is not NAME:VALUE")
            fixed[name.strip()] = value.strip()
        return functools.partial(open_http, url, token, fixed)
    if not config_files:
        raise BadInput("give --config-file (a placement.conf naming the database) or "
                       "--placement-url")
    _database_conf(config_files)
    return functools.partial(open_database, list(config_files))


def exit_code(results: Sequence[migrate.NodeResult]) -> int:
    statuses = {result.status for result in results}
    if migrate.REFUSED in statuses:
        return EXIT_REFUSED
    if migrate.INVARIANT in statuses:
        return EXIT_INVARIANT
    if migrate.FAILED in statuses:
        return EXIT_FAILED
    if migrate.CONFLICT in statuses:
        return EXIT_CONFLICT
    return EXIT_OK


def show_for(output: str, dry_run: bool, verbose: bool) -> migrate.Show | None:
    """What each node's result keeps of its trees and plan for the report: the
    drawn lines for text with ``--dry-run`` or ``--verbose``, the JSON parts
    for ``--format json``, nothing otherwise (picklable, for the workers)."""
    if output == "json":
        return render.node_json
    return render.node_text if dry_run or verbose else None


def write_text(results: Sequence[migrate.NodeResult], code: int, dry_run: bool, verbose: bool,
               out: TextIO) -> None:
    for result in results:
        line = f"{result.nodename}: {result.status}"
        if result.status == migrate.SKIPPED:
            line += " (ironic)"
        if result.moves:
            line += f", {len(result.moves)} allocation changes"
        if result.calls:
            line += f" ({result.calls} Placement calls)"
        if result.error:
            line += f": {result.error}"
        out.write(line + "\n")
        for finding in result.findings:
            out.write(f"  {finding}\n")
        for violation in result.violations:
            out.write(f"  invariant {violation}\n")
        if (dry_run or verbose) and result.detail is not None:
            out.writelines(f"{line}\n" for line in result.detail)
    summary = ", ".join(f"{count} {status}"
                        for status, count in sorted(migrate.summarize(results).items()))
    verdicts = {
        EXIT_OK: "dry run: nothing changed" if dry_run else "done",
        EXIT_REFUSED: "refused by the pre-flight checks: nothing was written; fix the "
                      "findings above and run again",
        EXIT_CONFLICT: "conflicts remained on some nodes (is another writer running?); "
                       "run again",
        EXIT_FAILED: "a node failed; the nodes before it are done; run again after fixing",
        EXIT_INVARIANT: "a node's write broke an invariant and the run stopped (the node's "
                        "line says whether its write was rolled back)",
    }
    out.write(f"{summary or 'no nodes'}. {verdicts[code].capitalize()}.\n")


def write_json(results: Sequence[migrate.NodeResult], code: int, dry_run: bool,
               out: TextIO) -> None:
    nodes = []
    for result in results:
        detail = result.detail or {"moves": [render.move_json(move, {})
                                             for move in result.moves],
                                   "before": None, "after": None, "plan": None}
        nodes.append({
            "nodename": result.nodename, "status": result.status, "root": result.root,
            "calls": result.calls, "error": result.error,
            "findings": [finding.as_dict() for finding in result.findings],
            "violations": [vars(violation) for violation in result.violations],
            "writes": result.writes, **detail,
        })
    json.dump({"dry_run": dry_run, "exit_code": code, "summary": migrate.summarize(results),
               "nodes": nodes}, out, indent=2, sort_keys=True)
    out.write("\n")


def print_nova_config(hosts: Sequence[Any], options: releases.DriverOptions,
                      out: TextIO) -> int:
    """``--print-nova-config``: the target's nova.conf per node (completed from nova.conf)."""
    nodes, _ = migrate.with_nova_conf(nodes_of(hosts), options)
    out.write(conf_check.render_config(list(nodes.values()), options.target))
    return EXIT_OK


def migrate_compute_inventory(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.nova_database:
        hosts = from_nova.hosts_from_nova(args, driver_options(args).nova_conf, out, err)
        if isinstance(hosts, int):
            return hosts
    else:
        hosts = load_hosts(args.host_files)
    if args.print_nova_config:
        return print_nova_config(hosts, driver_options(args), out)
    progress = progress_callback(err, args.format, force=args.progress)
    config_files = [*args.config_files, *args.sub_config_files]
    opener = placement_opener(config_files, args.placement_url, args.token, args.headers)
    options = driver_options(args)
    if options.numa_in_placement:
        err.write(NUMA_WARNING.format(number=options.target.number))
    workers = args.workers or parallel.auto_workers(
        sum(not node.is_ironic for node in nodes_of(hosts).values()))
    settings = migrate.Settings(dry_run=args.dry_run, options=options,
                                show=show_for(args.format, args.dry_run, args.verbose))
    if workers > 1:
        results = parallel.ParallelMigration(opener, hosts, workers, settings,
                                             progress=progress).run()
    else:
        with opener() as placement:
            results = migrate.Migration(placement, hosts, settings, progress=progress).run()
    code = exit_code(results)
    if args.format == "json":
        write_json(results, code, args.dry_run, out)
    else:
        write_text(results, code, args.dry_run, args.verbose, out)
    return code


def _release(value: str) -> releases.Release:
    try:
        return releases.find_release(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def driver_options(args: argparse.Namespace) -> releases.DriverOptions:
    """The shims' options from the command line; BadInput for an unreadable nova.conf."""
    conf = None
    if args.nova_configs:
        try:
            conf = load_nova_conf(args.nova_configs)
        except NovaConfError as error:
            raise BadInput(str(error)) from error
    return releases.DriverOptions(target=args.target_release,
                                  numa_in_placement=args.numa_in_placement,
                                  allow_vgpu_mismatch=args.allow_vgpu_mismatch,
                                  nova_conf=conf)


NUMA_WARNING = ("warning: --numa-in-placement: no nova release up to {number} models NUMA "
                "cells in Placement; its compute service will put VCPU, PCPU and MEMORY_MB "
                "back on the compute node's root provider at start\n")


def _workers(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of workers")
    return number


def main(argv: Sequence[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Console-script entry point; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    logging.basicConfig(stream=err, format="%(levelname)s %(name)s: %(message)s",
                        level=logging.INFO if args.verbose else logging.WARNING)
    if not args.verbose:
        # The tracker logs its reshape at INFO and conflicts it retries at INFO.
        logging.getLogger("nova_reshape").setLevel(logging.WARNING)
    try:
        if getattr(args, "run", None):  # commands kept in their own modules
            return args.run(args, out, err)
        return migrate_compute_inventory(args, out, err)
    except (HostDescriptionError, BadInput) as error:
        err.write(f"{PROGRAM}: error: {error}\n")
        return EXIT_BAD_INPUT
    except sa.exc.SQLAlchemyError as error:
        # SQLAlchemy's text spans lines (statement, parameters, a link); one is enough.
        from placement_wsgi.service import one_line
        err.write(f"{PROGRAM}: error: database: {one_line(error)}; "
                  "running again is safe once the database is reachable\n")
        return EXIT_FAILED
    except (requests.RequestException, exception.NovaException, OSError) as error:
        err.write(f"{PROGRAM}: error: {type(error).__name__}: {error}\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        err.write(f"{PROGRAM}: interrupted; running again is safe\n")
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

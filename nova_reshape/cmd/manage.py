"""``nova-reshape-manage``: the offline fast-forward-upgrade reshape.

::

    nova-reshape-manage [--config-file FILE]... placement migrate_compute_inventory \\
        (--host-file PATH... | [--nova-database URL | --nova-api-database URL] \\
        [--cell NAME|UUID]... [--skip-unreachable-cells] [--collected DIR] \\
        [--cyborg-database URL]) [--dry-run] [--verbose] \\
        [--format text|json] [--report FILE] [--progress] [--workers N] \\
        [--target-release RELEASE] \\
        [--numa-in-placement] [--nova-config PATH]... [--allow-vgpu-mismatch]
    nova-reshape-manage placement migrate_compute_inventory --host-file PATH ... \\
        [--nova-config FILE]... --print-nova-config
    nova-reshape-manage placement migrate_compute_inventory \\
        --placement-url URL [--token TOKEN] [--header NAME:VALUE] [--journal FILE] \\
        --host-file PATH ...
    nova-reshape-manage placement describe_hosts [--nova-api-database URL] --output DIR ...
    nova-reshape-manage host collect --output FILE ...
    nova-reshape-manage [--config-file FILE]... placement runs [show RUN_ID] [--format F]
    nova-reshape-manage [--config-file FILE]... placement revert RUN_ID [--dry-run] \\
        [--host HOST]... [--format F] [--report FILE]
    nova-reshape-manage placement revert RUN_ID --journal FILE --placement-url URL ...
    nova-reshape-manage placement audit [--delete] [--resource_provider UUID] ...
    nova-reshape-manage placement sync_aggregates [--verbose] ...
    nova-reshape-manage placement heal_allocations [--dry-run] [--instance UUID] ...

For every non-ironic node of the described hosts (docs/host-description.md)
the resource tracker's start-up update runs with the described devices'
shims as virt driver: nodes still in the flat shape get their inventory and
allocations moved to child providers in one atomic ``POST /reshaper``
each. With ``--config-file`` (its ``[placement_database] connection``) the
Placement application runs in-process on the database through
PlacementDirect (without it, nova.conf's ``[placement_database]
connection``, as before Stein), so every service can be down; with
``--placement-url`` a running Placement is used instead. See docs/migrate-compute-inventory.md.

Exit status:

* 0 - done, or nothing to do (every node already in the new shape);
* 1 - a node failed (Placement refused a write, could not be reached, ...);
* 2 - bad input: command line, host file or configuration;
* 3 - pre-flight refused: findings listed, nothing written;
* 4 - generation conflicts remained on some node after the retries
  (another writer is active); the other nodes are done, run again;
* 5 - an invariant was violated after a node was written; the run stopped.
* 130 / 143 - stopped by SIGINT / SIGTERM (workers too); one line says how
  many nodes were written, the others are untouched; run again
  (:mod:`placement_wsgi.cmd.signals`).

``audit``, ``sync_aggregates`` and ``heal_allocations`` keep nova's exit statuses
(:mod:`nova_reshape.cmd.audit`, :mod:`nova_reshape.cmd.sync_aggregates`,
:mod:`nova_reshape.cmd.heal`, docs/consistency.md); their bad input is 2 as above.

The command line becomes one typed request (:mod:`nova_reshape.cmd.request`)
before anything is read; whatever stops a command early is a
:class:`~nova_reshape.cmd.refusal.Refusal`, which :func:`main` alone turns
into its message and exit status; the report is written by
:mod:`nova_reshape.cmd.output`.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple, TextIO

import requests
import sqlalchemy as sa

from nova_reshape import exception
from nova_reshape.cmd import (
    audit,
    collect,
    consistency_check,
    describe,
    from_nova,
    heal,
    journaled,
    log_lines,
    nova_cells,
    output,
    placement_rights,
    rebuild,
    report_file,
    request,
    revert,
    runs,
    scheduling,
    sync_aggregates,
)
from nova_reshape.cmd.from_nova import driver_options, host_confs
from nova_reshape.cmd.placement_access import (  # noqa: F401 - re-exported
    check_placement_database,
    open_database,
    open_http,
    placement_opener,
)
from nova_reshape.cmd.refusal import (  # noqa: F401 - the exit statuses, re-exported
    EXIT_BAD_INPUT,
    EXIT_CONFLICT,
    EXIT_FAILED,
    EXIT_INVARIANT,
    EXIT_OK,
    EXIT_REFUSED,
    PROGRAM,
    STATUS_EXITS,
    ExitClass,
    Interruption,
    Refusal,
    exit_for,
)
from nova_reshape.cmd.request import HostFiles, MigrateRequest, NovaDatabase
from nova_reshape.compute import conf_check, migrate, parallel
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.progress import progress_callback
from nova_reshape.virt import releases
from nova_reshape.virt.described import nodes_of
from nova_reshape.virt.host import Host, HostDescriptionError, check_readable, iter_hosts
from nova_reshape.virt.validated import ValidatedDocuments
from placement_wsgi import service
from placement_wsgi.cmd import signals


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
    request.add_parser(actions)
    heal.add_parser(actions)
    runs.add_parser(actions)
    revert.add_parser(actions)
    audit.add_parser(actions)
    sync_aggregates.add_parser(actions)
    rebuild.add_parser(actions)
    describe.add_parser(actions)
    collect.add_parser(categories)
    return parser


def _bad_input(message: str) -> Refusal:
    return Refusal(ExitClass.BAD_INPUT, message)


def exit_code(results: Sequence[migrate.NodeResult]) -> int:
    """The run's exit status from its nodes' statuses."""
    return exit_for({result.status for result in results})


class Inputs(NamedTuple):
    """What a run reads besides Placement: the described hosts (streamed from host
    files: consumed once), the shims' options, and how many hosts are described."""

    hosts: Iterable[Host]
    options: releases.DriverOptions
    count: int


def read_inputs(migrate_request: MigrateRequest, out: TextIO, err: TextIO) -> Inputs:
    """The described hosts (from host files, or nova's databases with nova.conf's
    help) and the shims' options; a refusal when they cannot be read or (from
    nova's databases) their sources disagree.

    Host files are only checked to be readable here; each is parsed when the
    run reaches it (:func:`streamed_hosts`), so no more than a batch of
    descriptions is held at once and a bad one is refused then, before
    anything is written.
    """
    paths = NovaConfigPaths(migrate_request.nova_configs)
    match migrate_request.hosts:
        case NovaDatabase() as source:
            snapshot = nova_cells.read_nova_hosts(source, paths)
            nova_cells.write_skipped(snapshot, err)
            confs = host_confs(paths, snapshot.host_names())
            hosts = from_nova.hosts_from_nova(migrate_request, source, snapshot, confs, out)
            return Inputs(hosts, driver_options(migrate_request, confs, hosts), len(hosts))
        case HostFiles(files):
            try:
                found = check_readable(list(files))
            except HostDescriptionError as error:
                raise _bad_input(str(error)) from error
            confs = host_confs(paths, paths.overridden_hosts())
            stream = HostStream(tuple(found))
            # Nodes of the hosts with a nova.conf of their own: one pass more, only then.
            own = iter(stream) if confs.by_host else ()
            return Inputs(stream, driver_options(migrate_request, confs, own), len(found))


@dataclasses.dataclass(frozen=True)
class HostStream:
    """The hosts of host files, parsed again on every pass (the consistency check's
    nodes, the scheduling check's preview, then the run): never all held at once.
    A document the schema passed once is not validated again in a later pass."""

    files: tuple[str, ...]
    validated: ValidatedDocuments = dataclasses.field(
        default_factory=ValidatedDocuments, compare=False, repr=False)

    def __iter__(self) -> Iterator[Host]:
        return streamed_hosts(self.files, self.validated)


def streamed_hosts(files: Sequence[str], validated: ValidatedDocuments | None = None,
                   ) -> Iterator[Host]:
    """The hosts of ``files``, parsed one at a time as the run asks; a refusal for
    a bad file."""
    try:
        yield from iter_hosts(files, validated)
    except HostDescriptionError as error:
        raise _bad_input(str(error)) from error


def print_nova_config(hosts: Sequence[Host], options: releases.DriverOptions,
                      out: TextIO) -> int:
    """``--print-nova-config``: the target's nova.conf per node (completed from nova.conf)."""
    nodes, _ = migrate.with_nova_conf(nodes_of(hosts), options)
    out.write(conf_check.render_config(list(nodes.values()), options.target))
    return EXIT_OK


def migrate_compute_inventory(migrate_request: MigrateRequest, out: TextIO,
                              err: TextIO, argv: Sequence[str] = ()) -> int:
    """The migration the request asks for; its exit status (refusals raised).
    ``argv``: the command line, for the journal (:mod:`nova_reshape.cmd.journaled`)."""
    if migrate_request.print_nova_config:
        inputs = read_inputs(migrate_request, out, err)
        return print_nova_config(list(inputs.hosts), inputs.options, out)
    report_file.check_report_path(migrate_request.report)
    journal_file = journaled.journal_path(migrate_request)
    # Placement's database (or URL) first: a wrong one is reported before
    # anything else is read.
    opener = placement_opener(migrate_request.placement,
                              NovaConfigPaths(migrate_request.nova_configs))
    inputs = read_inputs(migrate_request, out, err)
    options = inputs.options
    check_setup = scheduling.setup(migrate_request)
    if migrate_request.placement.url:  # the token's rights, before any write
        with opener() as placement:
            placement_rights.check_rights(placement, migrate_request.placement.url,
                                          dry_run=migrate_request.dry_run)
    # Orphaned or missing allocations on the nodes to migrate refuse the run first.
    consistency_check.run(migrate_request, opener, consistency_check.covered_nodes(inputs.hosts),
                          err)
    progress = progress_callback(err, migrate_request.output_format,
                                 force=migrate_request.progress)
    if options.numa_in_placement:
        err.write(output.NUMA_WARNING.format(number=options.target.number))
    try:
        checked = scheduling.run(migrate_request, opener, inputs.hosts, options, check_setup)
    except scheduling.SchedulingRefusal as refusal:
        report_file.write_refused(migrate_request, refusal.exit_code, refusal.table)
        raise
    with report_file.open_report(migrate_request) as report, \
            journaled.migration_run(opener, migrate_request, argv, err) as run:
        show = output.show_for(migrate_request)
        settings = migrate.Settings(dry_run=migrate_request.dry_run, options=options,
                                    show=report.show(show) if report else show,
                                    journal=run.run_id if run else None,
                                    journal_file=journal_file)
        with output.ReportSpool(migrate_request) as entries:
            # The report file first: it takes its record out of each result's detail.
            tally = WrittenTally(report.finished if report else None, entries)
            try:
                _run(migrate_request, opener, inputs, settings, progress, tally)
            except KeyboardInterrupt as stop:
                journaled.interrupted(run, tally.written)
                raise tally.interruption(stop, migrate_request.report) from None
            code = entries.exit_code()
            journaled.finish(run, code, entries.counts, err)
            scheduling.recheck(migrate_request, opener, checked, options, code)
            if report:
                report.scheduling = scheduling.table(checked)
                report.close(report_file.outcome(code, migrate_request.dry_run))
            entries.write(code, out, scheduling.details(
                checked, rechecked=not migrate_request.dry_run))
    return code


class WrittenTally:
    """The nodes written so far (a ``finished`` callback, passing each result on to
    every one of ``then``), for the line an interrupted run prints: every other
    node is untouched, since a node's write is one transaction."""

    def __init__(self, *then: migrate.Finished | None) -> None:
        self.then = [callback for callback in then if callback is not None]
        self.written = 0

    def __call__(self, result: migrate.NodeResult) -> None:
        if result.status in (migrate.MIGRATED, migrate.UPDATED):
            self.written += 1
        for callback in self.then:
            callback(result)

    def interruption(self, stop: KeyboardInterrupt, report: str | None) -> Interruption:
        """The run's one line once ``stop`` ended it."""
        detail = f" (listed in {report})" if report else ""
        return Interruption(stop, f"{self.written} node(s) were written{detail}, every "
                            "other node is untouched; running again is safe and "
                            "completes the rest")


def _run(migrate_request: MigrateRequest, opener: parallel.Opener, inputs: Inputs,
         settings: migrate.Settings, progress: migrate.Progress,
         finished: migrate.Finished) -> None:
    """The run over as many workers as asked (or chosen from the number of hosts);
    each node's result goes to ``finished``, none is kept."""
    workers = migrate_request.workers or parallel.auto_workers(inputs.count)
    if workers > 1:
        parallel.ParallelMigration(opener, inputs.hosts, workers, settings, progress=progress,
                                   finished=finished, keep_results=False,
                                   expected=inputs.count).run()
        return
    with opener() as placement:
        migrate.Migration(placement, inputs.hosts, settings, progress=progress,
                          finished=finished, keep_results=False, expected=inputs.count).run()


def _failure(error: Exception) -> Refusal:
    """A failure of the layers below (a database, Placement, a file) as a refusal."""
    if isinstance(error, sa.exc.SQLAlchemyError):
        # SQLAlchemy's text spans lines (statement, parameters, a link); one is enough.
        return Refusal(ExitClass.FAILED, f"database: {service.one_line(error)}; running "
                       "again is safe once the database is reachable")
    return Refusal(ExitClass.FAILED, f"{type(error).__name__}: {error}")


def _exit_status(command: Callable[[], int], migrate_request: MigrateRequest | None,
                 out: TextIO, err: TextIO) -> int:
    """Run ``command``; every refusal, and every failure below as one, printed and
    mapped to its exit status."""
    try:
        return command()
    except Refusal as refusal:
        stop = refusal
    except (sa.exc.SQLAlchemyError, requests.RequestException, exception.NovaException,
            OSError) as error:
        stop = _failure(error)
    except KeyboardInterrupt as interrupted:
        stop = Interruption(interrupted, "what was written is complete; running again is safe")
    output.write_refusal(stop, migrate_request, out, err)
    return stop.exit_code


def main(argv: Sequence[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Console-script entry point; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    log_lines.configure(err, logging.INFO if args.verbose else logging.WARNING)
    if not args.verbose:
        # The tracker logs its reshape at INFO and conflicts it retries at INFO.
        logging.getLogger("nova_reshape").setLevel(logging.WARNING)
    with signals.interruptible():
        if getattr(args, "run", None):  # commands kept in their own modules
            args.argv = argv
            return _exit_status(lambda: args.run(args, out, err), None, out, err)
        migrate_request = MigrateRequest.from_args(args)
        return _exit_status(lambda: migrate_compute_inventory(migrate_request, out, err, argv),
                            migrate_request, out, err)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

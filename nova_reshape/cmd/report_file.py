"""``--report FILE``: the run's report file, opened before the run and closed after it.

The report itself is :mod:`nova_reshape.runreport`; this module only says
what the command line gives it: the run's facts (the inputs as given,
database passwords hidden), which exit status each node status leads to,
and the run's outcome.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Iterator

from nova_reshape.cmd import output
from nova_reshape.cmd.refusal import EXIT_NAMES, STATUS_EXITS, ExitClass, Refusal
from nova_reshape.cmd.request import HostFiles, MigrateRequest, NovaDatabase
from nova_reshape.novadb.readonly import display_url
from nova_reshape.runreport.run import Outcome, RunFacts, RunReport, SchedulingTable
from nova_reshape.runreport.writers import writer_for


def inputs_of(request: MigrateRequest) -> tuple[tuple[str, str], ...]:
    """(name, value) of each input the run reads, as the operator gave it."""
    inputs: list[tuple[str, str]] = []
    match request.hosts:
        case HostFiles(paths):
            inputs += [("host file", path) for path in paths]
        case NovaDatabase() as source:
            if source.url:
                inputs.append(("nova database", display_url(source.url)))
            if source.api_url:
                inputs.append(("nova API database", display_url(source.api_url)))
            inputs += [("cell", cell) for cell in source.cells]
            if source.collected:
                inputs.append(("collected", source.collected))
            if source.cyborg_database:
                inputs.append(("cyborg database", display_url(source.cyborg_database)))
    inputs += [("nova.conf", path) for path in request.nova_configs]
    access = request.placement
    inputs += [("placement.conf", path) for path in access.config_files]
    if access.url:
        inputs.append(("placement URL", access.url))
    return tuple(inputs)


def facts_of(request: MigrateRequest) -> RunFacts:
    return RunFacts(target=str(request.target), dry_run=request.dry_run,
                    inputs=inputs_of(request),
                    started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"))


def outcome(code: int, dry_run: bool) -> Outcome:
    return Outcome(code, EXIT_NAMES[code], output.verdict(code, dry_run))


def check_report_path(path: str | None) -> None:
    """A refusal (bad input) for a ``--report`` file that cannot be written, before
    anything is read: its directory is missing or it names a directory."""
    if path is None:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise Refusal(ExitClass.BAD_INPUT,
                      f"--report {path}: the directory {directory} does not exist")
    if os.path.isdir(path):
        raise Refusal(ExitClass.BAD_INPUT, f"--report {path}: is a directory; name a file")


@contextlib.contextmanager
def open_report(request: MigrateRequest) -> Iterator[RunReport | None]:
    """The run's report when ``--report`` asks for one (its file open for the run), else None."""
    if request.report is None:
        yield None
        return
    try:
        stream = open(request.report, "w", encoding="utf-8")
    except OSError as error:
        raise Refusal(ExitClass.BAD_INPUT,
                      f"--report {request.report}: cannot write: {error.strerror}") from error
    with stream:
        yield RunReport(writer_for(request.report, stream), facts_of(request),
                        {str(status): code for status, code in STATUS_EXITS})


def write_refused(request: MigrateRequest, code: int,
                  scheduling: SchedulingTable | None) -> None:
    """With ``--report``: the report of a run refused before any node was run, with
    no node but what refused it (the scheduling check's table)."""
    with open_report(request) as report:
        if report is not None:
            report.scheduling = scheduling
            report.close(outcome(code, request.dry_run))

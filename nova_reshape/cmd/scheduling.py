"""``migrate_compute_inventory``'s scheduling check on the command line.

:func:`setup` settles what the check answers for from the request (nova's
databases as the hosts are read from them, else nova.conf's ``[api_database]
connection``; ``--flavors-file``; ``--all-flavors``) or says, in one warning
line, why it does not run (``--no-scheduling-check`` says nothing).
:func:`run` measures before and after the plan
(:mod:`nova_reshape.compute.scheduling_check`) and refuses the run, nothing
written, when a flavor not accepted loses every host; :func:`recheck`
measures again once the real run wrote. :func:`details` renders the answer
for the report: text lines, and the ``scheduling`` key of the JSON document.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from nova_reshape.cmd.refusal import Details, ExitClass, Refusal, database_refusal
from nova_reshape.cmd.request import MigrateRequest, NovaDatabase
from nova_reshape.compute import parallel
from nova_reshape.compute.scheduling_check import (
    CheckSetup,
    FlavorDelta,
    NodesRefused,
    SchedulingCheck,
    Verdict,
    measure,
    preview,
)
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.nova.errors import NovaConfError
from nova_reshape.novadb.readonly import DatabaseReadError
from nova_reshape.runreport.run import SchedulingTable
from nova_reshape.scheduler.capacity.flavors import FlavorError
from nova_reshape.scheduler.capacity.inputs import choose_flavors, read_nova
from nova_reshape.scheduler.errors import ConfigError
from nova_reshape.virt.host import Host
from nova_reshape.virt.releases import DriverOptions

SKIPPED_OVER_HTTP = ("it reads the Placement database (give --config-file), not "
                     "--placement-url")
SKIPPED_REFUSED = "the pre-flight refuses nodes, so there is no plan to measure"


class SchedulingRefusal(Refusal):
    """``scheduling_lost``: the refusal, and the report file's table of it."""

    def __init__(self, message: str, findings: Sequence[Any], refused_details: Details,
                 refused_table: SchedulingTable | None) -> None:
        super().__init__(ExitClass.REFUSED, message, findings, refused_details)
        self.table = refused_table


class Checked:
    """The run's scheduling check: its answer (None: skipped, ``skipped`` says why),
    and what measuring it again needs."""

    def __init__(self, check: SchedulingCheck | None = None, setup: CheckSetup | None = None,
                 cpu_sets: dict[str, Any] | None = None, skipped: str | None = None) -> None:
        self.check, self.setup, self.cpu_sets = check, setup, cpu_sets or {}
        self.skipped = skipped


def setup(request: MigrateRequest) -> CheckSetup | Checked | None:
    """What the check answers for; a skipped :class:`Checked` saying why it cannot run
    (the report says it); None with ``--no-scheduling-check`` or when nothing names a
    flavor (no nova database, no ``--flavors-file``)."""
    options = request.scheduling
    if not options.enabled:
        return None
    if request.placement.url:
        return Checked(skipped=SKIPPED_OVER_HTTP)
    source = request.hosts
    api_url = source.api_url if isinstance(source, NovaDatabase) else None
    cell_url = source.url if isinstance(source, NovaDatabase) else None
    cells = source.cells if isinstance(source, NovaDatabase) else ()
    skip = source.skip_unreachable_cells if isinstance(source, NovaDatabase) else False
    cyborg = source.cyborg_database if isinstance(source, NovaDatabase) else None
    try:
        inputs = read_nova(NovaConfigPaths(request.nova_configs).common(), api_url, cell_url,
                           cells, skip, cyborg)
        if inputs.cells is None and not inputs.catalogue and not options.flavors_file:
            return None  # nothing names a flavor: nothing to check (documented)
        flavors = choose_flavors(inputs, (), options.all_flavors, options.flavors_file)
    except (FlavorError, NovaConfError, ConfigError) as error:
        raise Refusal(ExitClass.BAD_INPUT, str(error)) from error
    except DatabaseReadError as error:
        raise database_refusal(error) from error
    names = {flavor.name for flavor in flavors}
    unknown = [name for name in options.accepted if name not in names]
    if unknown:
        raise Refusal(ExitClass.BAD_INPUT, f"--accept-scheduling-loss {unknown[0]}: not a "
                      f"flavor the check answers for ({', '.join(sorted(names)) or 'none'})")
    return CheckSetup(inputs, tuple(flavors), frozenset(options.accepted))


def run(request: MigrateRequest, opener: parallel.Opener, hosts: Iterable[Host],
        options: DriverOptions, check_setup: CheckSetup | Checked | None) -> Checked | None:
    """Before and after, nothing written; a refusal (exit 3, the tables with it) when a
    flavor not accepted loses every host. Skipped when the run's own pre-flight
    refuses a node: the run then refuses with its findings."""
    if not isinstance(check_setup, CheckSetup):
        return check_setup
    try:
        with opener() as placement:
            check, cpu_sets = preview(placement, hosts, options, check_setup)
    except NodesRefused:
        return Checked(skipped=SKIPPED_REFUSED)
    checked = Checked(check, check_setup, cpu_sets)
    findings = check.findings()
    if findings:
        raise SchedulingRefusal(f"{len(findings)} flavor(s) would have no valid host after "
                                "the migration: nothing was written", findings,
                                details(check, rechecked=False), table(checked))
    return checked


def recheck(request: MigrateRequest, opener: parallel.Opener, checked: Checked | None,
            options: DriverOptions, code: int) -> None:
    """After a real run that wrote everything: the "after" table measured again."""
    if checked is None or checked.check is None or checked.setup is None \
            or request.dry_run or code != 0:
        return
    with opener() as placement:
        checked.check.measured = measure(placement, checked.setup, options, checked.cpu_sets)


def details(checked: Checked | SchedulingCheck | None, rechecked: bool) -> Details:
    """The check for the report: text lines and the JSON document's ``scheduling``;
    ``rechecked``: whether the run was to measure again after writing (a real run
    not refused), so that the text says when it did not."""
    if isinstance(checked, Checked):
        if checked.check is None:
            return Details((f"Scheduling check skipped: {checked.skipped}",),
                           {"scheduling": {"skipped": checked.skipped}})
        checked = checked.check
    if checked is None:
        return Details()
    return Details(tuple(text_lines(checked, rechecked)), {"scheduling": document(checked)})


def _host_lines(delta: FlavorDelta) -> list[str]:
    lines = [f"    lost {host.name} ({host.fits} -> 0): {why}" for host, why in delta.lost()]
    lines += [f"    gained {host.name} (0 -> {host.fits})" for host in delta.gained()]
    after = delta.after.by_uuid()
    lines += [f"    {host.name} fits {host.fits} -> {after[uuid].fits}"
              for uuid, host in delta.before.valid_hosts().items()
              if uuid in after and after[uuid].valid and after[uuid].fits != host.fits]
    lines += [f"    note: {note}" for note in delta.after.notes]
    return lines


def _flavor_line(delta: FlavorDelta, accepted: bool) -> str:
    verdict = delta.verdict
    word = {Verdict.LOST: "LOST" + (" (accepted)" if accepted else ""),
            Verdict.LOSS: "loss (warning)"}.get(verdict, str(verdict))
    return (f"  flavor {delta.name}: {word}: {len(delta.before.valid_hosts())} -> "
            f"{len(delta.after.valid_hosts())} valid host(s), {delta.before.total} -> "
            f"{delta.after.total} more fit")


def text_lines(check: SchedulingCheck, rechecked: bool) -> list[str]:
    """Per flavor its verdict, hosts lost (with why), gained, and changed counts."""
    lines = ["Scheduling check (nova 34's scheduler; before -> after this migration):"]
    for delta in check.deltas():
        lines.append(_flavor_line(delta, delta.name in check.accepted))
        lines.extend(_host_lines(delta))
    if not check.before.flavors:
        lines.append("  no flavor to check")
    lines.extend(f"  note: {note}" for note in check.notes)
    if check.measured is not None:
        differ = check.differences()
        lines.append("Scheduling re-checked after writing: " + (
            f"differs from the plan for {', '.join(differ)}" if differ
            else "the same as planned"))
    elif rechecked:
        lines.append("Scheduling not re-checked: the run did not complete")
    return lines


def document(check: SchedulingCheck) -> dict[str, Any]:
    """The JSON form: both tables (the capacity document), each flavor's verdict."""
    flavors = [{"name": delta.name, "verdict": str(delta.verdict),
                "accepted": delta.name in check.accepted,
                "hosts_before": len(delta.before.valid_hosts()),
                "hosts_after": len(delta.after.valid_hosts()),
                "total_before": delta.before.total, "total_after": delta.after.total,
                "lost": [{"name": host.name, "reason": why} for host, why in delta.lost()],
                "gained": [host.name for host in delta.gained()],
                "notes": list(delta.after.notes)} for delta in check.deltas()]
    return {"flavors": flavors, "before": check.before.to_dict(),
            "after": check.after.to_dict(), "notes": list(check.notes),
            "rechecked": None if check.measured is None else {
                "after": check.measured.to_dict(), "differs": check.differences()}}


#: The columns of the report file's scheduling table.
TABLE_COLUMNS = ("flavor", "verdict", "valid hosts before", "valid hosts after",
                 "more fit before", "more fit after", "hosts lost (why)", "hosts gained")


def table(checked: Checked | None) -> SchedulingTable | None:
    """The report file's scheduling table: one row per flavor (None: no check)."""
    if checked is None or checked.check is None:
        return None
    check = checked.check
    rows = tuple(
        (delta.name, str(delta.verdict) + (" (accepted)" if delta.name in check.accepted
                                           else ""),
         len(delta.before.valid_hosts()), len(delta.after.valid_hosts()),
         delta.before.total, delta.after.total,
         "; ".join(f"{host.name}: {why}" for host, why in delta.lost()),
         ", ".join(host.name for host in delta.gained()))
        for delta in check.deltas())
    return SchedulingTable(TABLE_COLUMNS, rows)

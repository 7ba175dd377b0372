"""``placement audit``: allocations on compute providers that nova no longer accounts for.

::

    nova-reshape-manage [--config-file FILE] placement audit [--delete]
        [--resource_provider UUID] [--verbose]
        [--nova-config PATH]... [--nova-api-database URL] [--cell NAME|UUID]...
        [--placement-url URL [--token TOKEN] [--header NAME:VALUE]...]

nova's ``nova-manage placement audit`` offline: nova's instances and
migrations are read from every cell in one set-based read each, Placement's
allocations in bulk (in-process) or per provider (``--placement-url``);
the findings, deletions and exit statuses are nova 34's
(:mod:`nova_reshape.consistency.audit`; docs/consistency.md):

* 0 - no orphaned allocation;
* 3 - orphaned allocations found (nothing written);
* 4 - orphaned allocations found and deleted (``--delete``);
* 1 - a deletion failed (the run stopped after that provider), or
  Placement or a database could not be read;
* 127 - ``--resource_provider`` names no provider;
* 2 - bad input (command line, configuration, database URL, ``--cell``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, TextIO

from nova_reshape.cmd import cloud_inputs, consistency_journal
from nova_reshape.cmd.refusal import PROGRAM, ExitClass, Refusal
from nova_reshape.consistency import audit, placement_reads
from nova_reshape.consistency.journaled_writes import JournaledWrites
from nova_reshape.consistency.nova_side import NovaHolders
from nova_reshape.journal import RunStatus
from nova_reshape.novadb.holders import read_holders_on
from nova_reshape.progress import progress_callback

#: The command's name in the journal.
COMMAND = "audit"
#: nova's exit status for a ``--resource_provider`` that names no provider.
EXIT_UNKNOWN_PROVIDER = 127


def add_parser(actions: Any) -> argparse.ArgumentParser:
    """Register ``placement audit`` under the placement category."""
    parser = actions.add_parser(
        "audit", help="find (and with --delete remove) allocations on compute providers "
        "whose consumer is neither an instance nor an in-progress migration there")
    cloud_inputs.add_arguments(parser)
    parser.add_argument("--delete", action="store_true",
                        help="delete the orphaned allocations found")
    parser.add_argument("--resource_provider", "--resource-provider", metavar="UUID",
                        dest="provider_uuid", help="audit only this resource provider")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="one line per orphaned allocation (and per deletion)")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The audit the arguments ask for; its exit status (refusals raised)."""
    prepared = cloud_inputs.prepare(args, read_holders_on)
    nova = NovaHolders.from_cells(prepared.cells, selected=bool(prepared.inputs.cells))
    if not nova.complete:
        err.write(f"{PROGRAM}: warning: not every cell is read (--cell): only providers "
                  "under the compute nodes of the cells read are audited\n")
    inputs = {"delete": True, "resource_provider": args.provider_uuid,
              "cells": list(prepared.inputs.cells)}
    with prepared.placement() as placement, consistency_journal.journaled_writes(
            placement, COMMAND, getattr(args, "argv", ()), inputs) as writes:
        try:
            outcome = _audit(placement, nova, args, out, err, writes)
        except placement_reads.PlacementReadError as error:
            raise Refusal(ExitClass.FAILED, f"Placement: {error}") from error
        if outcome is not None:
            consistency_journal.finish(
                writes, RunStatus.FAILED if outcome.failed else RunStatus.OK,
                {"deleted": len(outcome.deleted), "failed": len(outcome.failed)}, err)
    if outcome is None:
        return EXIT_UNKNOWN_PROVIDER
    write_outcome(outcome, args.verbose, out, err)
    consistency_journal.revertable(writes, out)
    return int(outcome.status)


def _audit(placement: Any, nova: NovaHolders, args: argparse.Namespace, out: TextIO,
           err: TextIO, writes: JournaledWrites | None) -> audit.AuditOutcome | None:
    providers = placement_reads.list_providers(placement, args.provider_uuid)
    if args.provider_uuid is not None and not providers:
        err.write(f"{PROGRAM}: resource provider {args.provider_uuid} does not exist\n")
        return None
    bars = progress_callback(err)
    progress = (lambda done, total: bars("audited", done, total)) if bars else None
    findings = audit.find_orphans(
        placement_reads.provider_allocations(placement, providers, progress), nova)
    if bars:
        bars.close()
    if args.verbose:
        for finding in findings:
            out.write(f"orphaned: {describe(finding)}\n")
    if not args.delete:
        return audit.AuditOutcome(findings)

    def done(finding: audit.Finding, error: str | None) -> None:
        if args.verbose and error is None:
            out.write(f"deleted: {describe(finding)}\n")
    return audit.delete_orphans(placement, findings, done, writes)


def describe(finding: audit.Finding) -> str:
    """One finding on one line."""
    notes = ([f"root {finding.root}"] if finding.root != finding.provider else []) + (
        [] if finding.root_is_node else ["no compute node"])
    tree = f" ({', '.join(notes)})" if notes else ""
    resources = ", ".join(f"{name}={amount}" for name, amount in sorted(finding.resources.items()))
    return f"consumer {finding.consumer} on provider {finding.provider}{tree}: {resources}"


def write_outcome(outcome: audit.AuditOutcome, verbose: bool, out: TextIO,
                  err: TextIO) -> None:
    """The run's summary line (and a failed deletion's line on ``err``)."""
    for finding, error in outcome.failed:
        err.write(f"{PROGRAM}: deleting the allocations of consumer {finding.consumer} on "
                  f"provider {finding.provider} failed: {error}\n")
    if outcome.stopped_at:
        err.write(f"{PROGRAM}: stopped after provider {outcome.stopped_at}: fix the problem "
                  "by hand and run again\n")
        return
    findings = outcome.findings
    if not findings:
        out.write("no orphaned allocations\n")
        return
    counted = (f"{len(findings)} orphaned allocation(s) of {_count(findings, 2)} consumer(s) "
               f"on {_count(findings, 0)} provider(s)")
    out.write(f"{counted}: deleted\n" if outcome.delete else
              f"{counted}; --delete deletes them\n")


def _count(findings: Sequence[audit.Finding], field: int) -> int:
    return len({finding[field] for finding in findings})

"""``placement sync_aggregates``: nova's host aggregates mirrored as Placement aggregates.

::

    nova-reshape-manage [--config-file FILE] placement sync_aggregates [--verbose]
        [--nova-config PATH]... [--nova-api-database URL] [--cell NAME|UUID]...
        [--placement-url URL [--token TOKEN] [--header NAME:VALUE]...]

nova's ``nova-manage placement sync_aggregates`` offline: the aggregates
and host mappings from nova's API database, each host's compute node from
its cell, one Placement listing per aggregate to see what is there, and
nova's own requests to add what is missing; only adds
(:mod:`nova_reshape.consistency.aggregates`; docs/consistency.md). Exit
statuses, as nova documents them:

* 0 - every host's provider is in its aggregates;
* 1 - a host has more than one compute node (the run stopped there);
* 2 - Placement refused a read (the run stopped), or bad input (command
  line, configuration, database URL, ``--cell``);
* 3 - Placement refused a write (the run stopped);
* 4 - a host in an aggregate has no host mapping;
* 5 - a host in an aggregate has no compute node in its cell;
* 6 - a host's compute node has no resource provider (nova 34 stops with
  2 here although it documents 6; this follows the documentation).
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from nova_reshape.cmd import cloud_inputs, consistency_journal
from nova_reshape.cmd.refusal import PROGRAM
from nova_reshape.consistency import aggregates
from nova_reshape.journal import RunStatus
from nova_reshape.novadb.holders import read_nodes_on

#: The command's name in the journal.
COMMAND = "sync_aggregates"
#: The journaled run's status by outcome (others: ``refused``, hosts left out).
RUN_STATUS = {aggregates.SyncStatus.OK: RunStatus.OK,
              aggregates.SyncStatus.READ_FAILED: RunStatus.FAILED,
              aggregates.SyncStatus.WRITE_FAILED: RunStatus.FAILED}


def add_parser(actions: Any) -> argparse.ArgumentParser:
    """Register ``placement sync_aggregates`` under the placement category."""
    parser = actions.add_parser(
        "sync_aggregates", help="add each compute node provider to the Placement "
        "aggregates of its host's nova host aggregates")
    cloud_inputs.add_arguments(parser)
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="one line per provider added to an aggregate")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The sync the arguments ask for; its exit status (refusals raised)."""
    prepared = cloud_inputs.prepare(args, read_nodes_on)
    each = prepared.cells
    plan = aggregates.plan_sync(cloud_inputs.read_aggregates(prepared.inputs),
                                each.host_cells,
                                {cell.uuid: nodes for cell, _, nodes in each.read})

    def done(added: aggregates.Membership) -> None:
        if args.verbose:
            out.write(f"added: host {added.host} (provider {added.provider}) to aggregate "
                      f"{added.aggregate_name} ({added.aggregate})\n")
    with prepared.placement() as placement, consistency_journal.journaled_writes(
            placement, COMMAND, getattr(args, "argv", ()),
            {"cells": list(prepared.inputs.cells)}) as writes:
        outcome = aggregates.apply_plan(placement, plan, done, writes)
        consistency_journal.finish(writes, RUN_STATUS.get(outcome.status, RunStatus.REFUSED),
                                   {"added": len(outcome.added)}, err)
    write_outcome(outcome, out, err)
    consistency_journal.revertable(writes, out)
    return int(outcome.status)


def write_outcome(outcome: aggregates.SyncOutcome, out: TextIO, err: TextIO) -> None:
    """The hosts that could not be mirrored (on ``err``) and the summary line."""
    plan = outcome.plan
    lines = []
    if plan.too_many:
        host, count = plan.too_many
        lines.append(f"host {host} has {count} compute nodes; which one belongs in its "
                     "aggregates is for the operator to settle; stopped there")
    if outcome.stopped:
        lines.append(f"{outcome.stopped[1]}; stopped there")
    if plan.outside:
        lines.append("warning: hosts in cells not read (--cell) left alone: "
                     + ", ".join(sorted(plan.outside)))
    if plan.no_uuid:
        lines.append("warning: host aggregates without a uuid left alone (a nova API "
                     "service loading them gives them one): " + ", ".join(plan.no_uuid))
    if plan.unmapped:
        lines.append("hosts in host aggregates without a host mapping in nova's API "
                     "database (run 'nova-manage cell_v2 discover_hosts'): "
                     + ", ".join(sorted(plan.unmapped)))
    if plan.no_node:
        lines.append("hosts without a compute node in their cell's database (start "
                     "their nova-compute once): " + ", ".join(sorted(plan.no_node)))
    if outcome.no_provider:
        lines.append("compute nodes without a resource provider in Placement (start "
                     "their nova-compute, or run migrate_compute_inventory): " + ", ".join(
                         f"{host}={uuid}" for host, uuid in sorted(outcome.no_provider.items())))
    for line in lines:
        err.write(f"{PROGRAM}: {line}\n")
    out.write(f"{len(outcome.added)} provider aggregate membership(s) added\n")

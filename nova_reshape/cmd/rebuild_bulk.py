"""``placement rebuild``'s set-based path, and its journal.

The rebuild's result is decided before anything is written: every node's
tree (:func:`nova_reshape.compute.rebuilt_trees.final_trees`: the first
start and the migration, in memory), every instance's allocations
(:func:`nova_reshape.consistency.rebuilt.heal_in_memory`: heal's planner
over those trees) and the aggregates
(:func:`nova_reshape.consistency.rebuilt.memberships`). The rows are then
written by :func:`placement_wsgi.objects.bulk_load.load_trees`, a batch of
nodes per transaction, and each batch's nodes are journaled in that same
transaction: read back inside it (``read_batch``), each node's entry has
"before" nothing (:func:`nova_reshape.journal.absent`) and "after" the node
as written, so ``placement revert RUN`` deletes what the run created.

:func:`bulk_rebuild` returns None, having written nothing, when any step
would stop or be refused; the command then takes the requests' path
(:func:`nova_reshape.consistency.rebuild.rebuild`), which reports it as it
always has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Connection

from nova_reshape import journal
from nova_reshape.compute import first_start, rebuilt_trees
from nova_reshape.consistency import aggregates, rebuilt
from nova_reshape.consistency import rebuild as rebuilding
from nova_reshape.novadb.cells import CellRead
from nova_reshape.virt.host import Host
from nova_reshape.virt.releases import DriverOptions
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects import bulk_load
from placement_wsgi.objects.tree_state import read_batch

#: The rebuild's command name in the journal.
COMMAND = "rebuild"


class Decided:
    """What the rebuild will write, decided in memory (see the module)."""

    def __init__(self, finals: list[rebuilt_trees.FinalTree],
                 trees: list[bulk_load.LoadedTree], result: rebuilding.Rebuilt) -> None:
        self.finals, self.trees, self.result = finals, trees, result


def _with_aggregates(providers: list[bulk_load.LoadedProvider],
                     added: Sequence[str]) -> list[bulk_load.LoadedProvider]:
    if not added:
        return providers
    root = providers[0]
    return [bulk_load.LoadedProvider(root.uuid, root.name, root.parent, root.inventory,
                                     root.traits, sorted({*root.aggregates, *added})),
            *providers[1:]]


def decide(cells: Sequence[CellRead], nodes: list[first_start.NewNode], hosts: list[Host],
           options: DriverOptions, sync: aggregates.SyncPlan | None) -> Decided | None:
    """The whole rebuild in memory; None when any step would stop or be refused."""
    finals = rebuilt_trees.final_trees(nodes, rebuilding.without_consumers(hosts), options)
    if finals is None:
        return None
    trees = {final.root: rebuilt_trees.providers_of(final) for final in finals}
    healed = rebuilt.heal_in_memory(cells, trees)
    if healed is None:
        return None
    heal, consumers = healed
    outcome, added = None, {}
    if sync is not None:
        synced = rebuilt.memberships(sync, trees)
        if synced is None:
            return None
        outcome, added = synced
    loaded = [bulk_load.LoadedTree(_with_aggregates(trees[final.root],
                                                    added.get(final.root, ())),
                                   consumers.get(final.root, ())) for final in finals]
    result = rebuilding.Rebuilt(roots=len(finals), nodes=sum(f.reshaped for f in finals),
                                healed=heal.written, heal=heal, aggregates=outcome)
    return Decided(finals, loaded, result)


def journal_hook(run: journal.Recorder, finals: Sequence[rebuilt_trees.FinalTree],
                 ) -> bulk_load.Record:
    """Records each node of a batch inside the batch's transaction: "before" nothing,
    "after" the node as the transaction holds it."""
    names: Mapping[str, rebuilt_trees.FinalTree] = {final.root: final for final in finals}

    def record(connection: Connection, root_ids: list[int]) -> None:
        changes = []
        for state in read_batch(connection, root_ids):
            final = names[state.root]
            changes.append(journal.Change(final.nodename, final.host,
                                          journal.absent(state.root), journal.of_state(state)))
        run.record_all(connection, changes)
        run.counts["created"] += len(changes)

    return record


def write(direct: PlacementDirect, decided: Decided, run: journal.Recorder | None,
          done: Callable[[int], None] | None = None) -> rebuilding.Rebuilt:
    """Write what :func:`decide` decided (journaled in ``run`` when given)."""
    bulk_load.load_trees(direct.database, decided.trees, done=done,
                         record=None if run is None else journal_hook(run, decided.finals))
    return decided.result


def inputs_of(request: Any) -> dict[str, Any]:
    """The run's inputs as the journal keeps them (no secret: URLs are masked)."""
    return {"config_files": list(request.config_files),
            "nova_configs": list(request.nova_configs),
            "target": request.target.series,
            "api_url": journal.command_line([request.source.api_url or ""])}

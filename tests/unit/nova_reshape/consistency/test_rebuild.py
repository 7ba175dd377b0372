"""The rebuild's order and its pieces: trees first, then every instance healed nested."""

from __future__ import annotations

import dataclasses

from nova_reshape.consistency import heal as healing
from nova_reshape.consistency import rebuild
from nova_reshape.nova.cell import CELL0_UUID, CellMapping
from nova_reshape.virt.host import Consumer, Host, Node
from tests.unit.nova_reshape.consistency import helpers


def test_without_consumers_keeps_everything_but_the_consumers():
    node = Node("n1", uuid="u1", consumers=(Consumer("c1"), Consumer("m1", kind="migration")),
                disabled=True)
    [host] = rebuild.without_consumers([Host("h.yaml", "h", (node, Node("n2")))])
    assert [n.consumers for n in host.nodes] == [(), ()]
    assert host.nodes[0] == Node("n1", uuid="u1", disabled=True)
    assert (host.path, host.host) == ("h.yaml", "h")


def test_the_trees_are_built_before_any_instance_is_healed(monkeypatch):
    calls = []
    cell0 = dataclasses.replace(helpers.cell("cell0"), cell=CellMapping(
        uuid=CELL0_UUID, name="cell0", database_connection=""))
    cell1 = helpers.cell("cell1", helpers.instance("i1"))

    def heal(cells, placement, options, done=None):
        calls.append(("heal", [read.cell.name for read in cells], options))
        return healing.Result(healing.Outcome.HEALED, healing.Plan(), written=1)

    monkeypatch.setattr(healing, "heal", heal)
    placement = object()

    def build(given):
        assert given is placement
        calls.append(("trees",))
        return 2, 1

    result = rebuild.rebuild([cell0, cell1], placement, build)
    assert calls == [("trees",), ("heal", ["cell1"], healing.Options(heal_nested=True))]
    assert (result.roots, result.nodes, result.healed, result.complete) == (2, 1, 1, True)


def test_a_heal_that_stops_leaves_the_rebuild_incomplete():
    stopped = healing.Result(healing.Outcome.UNSUPPORTED, healing.Plan(), 0, "a Cyborg flavor")
    assert not rebuild.Rebuilt(1, 1, 0, stopped).complete
    nothing = healing.Result(healing.Outcome.NOTHING, healing.Plan())
    assert rebuild.Rebuilt(1, 0, 0, nothing).complete


def test_the_aggregates_follow_a_complete_heal_only(monkeypatch):
    from nova_reshape.consistency import aggregates

    outcomes = iter([healing.Outcome.NOTHING, healing.Outcome.UNSUPPORTED])
    monkeypatch.setattr(healing, "heal", lambda cells, placement, options, done=None:
                        healing.Result(next(outcomes), healing.Plan(), 0, "stop"))
    applied = []

    def apply_plan(placement, plan, done=None):
        applied.append(plan)
        return aggregates.SyncOutcome(plan=plan)

    monkeypatch.setattr(aggregates, "apply_plan", apply_plan)
    plan = aggregates.SyncPlan()
    done = rebuild.rebuild([], object(), lambda placement: (0, 0), sync=plan)
    assert applied == [plan] and done.aggregates.plan is plan and done.complete
    stopped = rebuild.rebuild([], object(), lambda placement: (0, 0), sync=plan)
    assert applied == [plan] and stopped.aggregates is None and not stopped.complete
    stopped_sync = dataclasses.replace(done, aggregates=aggregates.SyncOutcome(
        plan=plan, stopped=(aggregates.SyncStatus.WRITE_FAILED, "refused")))
    assert stopped_sync.healed_all and not stopped_sync.complete

"""A node's record: its trees reduced while they exist, its entry once final."""

from __future__ import annotations

import functools
import json
import pickle

import pytest

from nova_reshape.compute.node_result import NodeResult, NodeStatus
from nova_reshape.compute.preflight import Finding
from nova_reshape.runreport import records
from tests.unit.nova_reshape.runreport.conftest import GPU, ROOT


@pytest.fixture
def spool(tmp_path):
    spool = records.Spool(str(tmp_path))
    yield spool
    spool.close()


def test_the_spool_gives_back_what_was_put(spool, tmp_path):
    first, second = spool.put("{\"a\": \"é\"}"), spool.put("[1]")
    assert (first.offset, second.offset) == (0, first.length)
    assert records.Spool.get(second) == "[1]" and records.Spool.get(first) == '{"a": "é"}'
    assert first.path.startswith(str(tmp_path))


def test_recorded_reduces_the_trees_and_keeps_the_outputs_own_detail(result, simulation, spool):
    show = functools.partial(records.recorded, spool, lambda res, sim, after: ["text lines"])
    detail = pickle.loads(pickle.dumps(show(result, simulation, None)))  # workers send it
    assert detail.inner == ["text lines"]
    assert detail.kinds == ("vgpu",)
    assert detail.disabled and not detail.read_back
    assert detail.before["VGPU"] == (2, 0, 2.0, 1)
    assert detail.after["VGPU"] == (2, 0, 2.0, 1)
    assert detail.before["VCPU+PCPU"] == (8, 0, 32.0, 2)
    drawing = json.loads(records.Spool.get(detail.drawing))
    assert [box[0] for box in drawing["after"]["boxes"]] == [ROOT, GPU]
    assert drawing["after"]["boxes"][1][1] == ["cmp-1_pci_0000_84_00_0", "VGPU 2 · used 1"]
    assert drawing["after"]["boxes"][1][6] is True  # new: not in the tree before
    assert drawing["before"]["boxes"][0][6] is False
    assert "VGPU 2 · used 1" in drawing["before"]["boxes"][0][1]
    assert drawing["moves"] == [["c-uuid", "VGPU", 1, "cmp-1", "cmp-1_pci_0000_84_00_0",
                                 "vgpu", None]]
    assert len(drawing["after"]["edges"]) == 1


def test_take_detail_puts_the_outputs_detail_back(result, simulation, spool):
    result.detail = records.recorded(spool, None, result, simulation, None)
    detail = records.take_detail(result)
    assert detail is not None and result.detail is None
    assert records.take_detail(result) is None


def test_after_counts_only_where_written_or_planned_to_be(result, simulation, spool):
    detail = records.recorded(spool, None, result, simulation, None)
    detail.after = {"VGPU": (9, 0, 9.0, 0)}
    assert records.after_sums(result, detail) == detail.after  # would-migrate: the plan
    for status in (NodeStatus.NOT_RUN, NodeStatus.REFUSED, NodeStatus.FAILED):
        result.status = status
        assert records.after_sums(result, detail) == detail.before
    detail.read_back = True  # read back after its write: what Placement holds
    assert records.after_sums(result, detail) == detail.after


def test_entry_of_a_refused_node_without_a_tree():
    finding = Finding("node_not_found", "cmp-9", "no resource provider named cmp-9")
    result = NodeResult("cmp-9", NodeStatus.REFUSED, findings=[finding])
    entry = records.entry(result, None, dry_run=False)
    assert entry["reason"] == "no resource provider named cmp-9"
    assert entry["fix"] == finding.fix
    assert entry["drawing"] is None and entry["after_is"] == "none"
    assert entry["findings"] == [finding.as_dict()]


def test_entry_says_how_to_read_the_tree_after(result, simulation, spool):
    detail = records.recorded(spool, None, result, simulation, None)
    assert records.entry(result, detail, dry_run=True)["after_is"] == "planned"
    result.status = NodeStatus.NOT_RUN
    assert records.entry(result, detail, dry_run=False)["after_is"] == "not written"
    result.status = NodeStatus.MIGRATED
    entry = records.entry(result, detail, dry_run=False)
    assert entry["after_is"] == "written" and entry["kinds"] == ["vgpu"] and entry["disabled"]

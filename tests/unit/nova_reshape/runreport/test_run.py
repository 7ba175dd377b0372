"""The run's report: nodes written in chunks as they finish, the end with sums and refusals."""

from __future__ import annotations

from nova_reshape.compute.node_result import NodeResult, NodeStatus
from nova_reshape.compute.preflight import Finding
from nova_reshape.runreport.run import Outcome, RunFacts, RunReport, SchedulingTable

FACTS = RunFacts("nova 34 (2026.2 Hibiscus)", False, (("host file", "hosts/"),), "now")


class Recording:
    """A writer that records its calls."""

    def __init__(self):
        self.calls = []

    def start(self, run):
        self.calls.append(("start", run))

    def nodes(self, chunk, entries):
        self.calls.append(("nodes", chunk, [entry["node"] for entry in entries]))

    def end(self, closing):
        self.calls.append(("end", closing))


def test_nodes_are_written_a_chunk_at_a_time_as_they_finish(result, simulation):
    writer = Recording()
    report = RunReport(writer, FACTS, {"refused": 3}, chunk_size=2)
    assert writer.calls == [("start", {"target": FACTS.target, "dry_run": False,
                                       "inputs": (("host file", "hosts/"),),
                                       "started": "now"})]
    show = report.show(None)
    result.detail = show(result, simulation, None)
    result.status = NodeStatus.MIGRATED
    report.finished(result)
    assert len(writer.calls) == 1 and result.detail is None  # buffered; detail taken
    report.finished(NodeResult("ironic-1", NodeStatus.SKIPPED))
    assert writer.calls[-1] == ("nodes", 0, ["cmp-1", "ironic-1"])
    assert report.buffer == []
    refused = NodeResult("cmp-2", NodeStatus.REFUSED,
                         findings=[Finding("node_not_found", "cmp-2", "no provider")])
    report.finished(refused)
    report.close(Outcome(3, "refused", "refused by the pre-flight checks"))
    assert writer.calls[-2] == ("nodes", 1, ["cmp-2"])
    closing = writer.calls[-1][1]
    assert closing["outcome"]["exit_code"] == 3
    assert closing["summary"]["nodes"] == 3 and closing["summary"]["read"] == 1
    assert closing["summary"]["counts"] == [
        {"status": "migrated", "nodes": 1, "exit_code": 0},
        {"status": "refused", "nodes": 1, "exit_code": 3},
        {"status": "skipped", "nodes": 1, "exit_code": 0}]
    assert [row["group"] for row in closing["capacity"]] == ["MEMORY_MB", "VCPU+PCPU", "VGPU"]
    assert {row["mark"] for row in closing["capacity"]} == {"conserved"}
    assert closing["refusals"] == [{"node": "cmp-2", "code": "node_not_found",
                                    "message": "no provider", "fix": refused.findings[0].fix,
                                    "findings": 1}]
    assert closing["scheduling"] is None


def test_a_scheduling_table_is_passed_through_when_given():
    writer = Recording()
    table = SchedulingTable(("flavor", "placeable"), (("m1.gpu", 3),))
    report = RunReport(writer, FACTS, {}, scheduling=table)
    report.close(Outcome(0, "ok", "done"))
    assert writer.calls[-1][1]["scheduling"] == {"columns": ("flavor", "placeable"),
                                                  "rows": (("m1.gpu", 3),)}
    assert [call[0] for call in writer.calls] == ["start", "end"]  # no empty chunk

"""What the migrate command prints: report lines, verdicts, refusals."""

from __future__ import annotations

import gc
import io
import json
import weakref

import pytest

from nova_reshape.cmd import output, render
from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.cmd.request import HostFiles, MigrateRequest, OutputFormat, PlacementAccess
from nova_reshape.compute import migrate
from nova_reshape.compute.preflight import Finding

FINDING = Finding("source_conflict", "cmp-1", "the sources disagree")


def _request(**fields) -> MigrateRequest:
    return MigrateRequest(placement=PlacementAccess(), hosts=HostFiles(("h",)), **fields)


@pytest.mark.parametrize(("fields", "show"), [
    ({}, None), ({"dry_run": True}, render.node_text), ({"verbose": True}, render.node_text),
    ({"output_format": OutputFormat.JSON}, render.node_json)])
def test_the_detail_kept_per_node_follows_the_output(fields, show):
    assert output.show_for(_request(**fields)) is show


def test_the_text_report_has_a_line_per_node_and_the_verdict():
    results = [migrate.NodeResult("cmp-1", migrate.MIGRATED, calls=1, order=0),
               migrate.NodeResult("ironic", migrate.SKIPPED, order=1),
               migrate.NodeResult("cmp-2", migrate.FAILED, error="boom", order=2)]
    out = io.StringIO()
    output.write_report(_request(), results, 1, out)
    assert out.getvalue().splitlines() == [
        "cmp-1: migrated (1 Placement calls)", "ironic: skipped (ironic)",
        "cmp-2: failed: boom",
        "1 failed, 1 migrated, 1 skipped. A node failed; the nodes before it are done; "
        "run again after fixing."]


@pytest.mark.parametrize(("dry_run", "verdict"), [(False, "Done."),
                                                  (True, "Dry run: nothing changed.")])
def test_success_says_done_or_nothing_changed(dry_run, verdict):
    out = io.StringIO()
    output.write_report(_request(dry_run=dry_run), [], 0, out)
    assert out.getvalue() == f"no nodes. {verdict}\n"


def _results(detail=None):
    """Four nodes' results in the order they finished (not the description order)."""
    return [migrate.NodeResult("cmp-2", migrate.REFUSED, order=2, findings=[FINDING]),
            migrate.NodeResult("cmp-0", migrate.WOULD_MIGRATE, order=0, calls=3,
                               detail=detail),
            migrate.NodeResult("ironic", migrate.SKIPPED, order=3),
            migrate.NodeResult("cmp-1", migrate.UNCHANGED, order=1, root="r1")]


@pytest.mark.parametrize("count", [0, 1, 4])
def test_the_streamed_json_report_is_the_document_json_dump_writes(count):
    drawn = {"moves": [], "before": {"name": "cmp-0"}, "after": None, "plan": {"writes": 1},
             "left_to_neutron": []}
    results = _results(drawn)[:count]
    out = io.StringIO()
    output.write_report(_request(output_format=OutputFormat.JSON, dry_run=True), results, 3,
                        out)
    ordered = sorted(results, key=lambda result: result.order)
    expected = io.StringIO()
    json.dump({"dry_run": True, "exit_code": 3, "summary": migrate.summarize(results),
               "nodes": [output.json_entry(result) for result in ordered]},
              expected, indent=2, sort_keys=True)
    assert out.getvalue() == expected.getvalue() + "\n"


def test_the_text_report_is_in_the_description_order_whatever_the_finishing_order():
    out = io.StringIO()
    output.write_report(_request(dry_run=True), _results(["  a drawn line"]), 3, out)
    assert [line.split(":")[0] for line in out.getvalue().splitlines()
            if not line.startswith(" ")][:4] == ["cmp-0", "cmp-1", "cmp-2", "ironic"]
    assert "  a drawn line" in out.getvalue().splitlines()


def test_the_report_keeps_no_result_once_its_entry_is_written():
    entries = output.ReportSpool(_request(output_format=OutputFormat.JSON))
    results = _results()
    alive = [weakref.ref(result) for result in results]
    for result in results:
        entries(result)
    del results, result
    gc.collect()
    assert [ref() for ref in alive] == [None] * 4
    assert entries.exit_code() == 3 and entries.counts[migrate.SKIPPED] == 1
    out = io.StringIO()
    entries.write(3, out)
    entries.__exit__(None, None, None)
    assert [node["nodename"] for node in json.loads(out.getvalue())["nodes"]] == [
        "cmp-0", "cmp-1", "cmp-2", "ironic"]


def test_a_refusal_without_findings_is_one_line_on_stderr():
    out, err = io.StringIO(), io.StringIO()
    output.write_refusal(Refusal(ExitClass.BAD_INPUT, "configuration: bad"), None, out, err)
    assert (out.getvalue(), err.getvalue()) == (
        "", "nova-reshape-manage: error: configuration: bad\n")


def test_findings_are_listed_then_the_refusal_line():
    out, err = io.StringIO(), io.StringIO()
    output.write_refusal(Refusal(ExitClass.REFUSED, "1 conflict(s)", [FINDING]),
                         _request(), out, err)
    assert out.getvalue().splitlines() == [str(FINDING), "refused: 1 conflict(s)"]
    assert err.getvalue() == ""


def test_in_json_the_findings_are_one_document():
    out = io.StringIO()
    output.write_refusal(Refusal(ExitClass.REFUSED, "1 conflict(s)", [FINDING]),
                         _request(output_format=OutputFormat.JSON, dry_run=True), out,
                         io.StringIO())
    assert json.loads(out.getvalue()) == {"dry_run": True, "exit_code": 3,
                                          "findings": [FINDING.as_dict()]}

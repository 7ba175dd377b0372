"""What the migrate command prints: report lines, verdicts, refusals."""

from __future__ import annotations

import io
import json

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
    results = [migrate.NodeResult("cmp-1", migrate.MIGRATED, calls=1),
               migrate.NodeResult("ironic", migrate.SKIPPED),
               migrate.NodeResult("cmp-2", migrate.FAILED, error="boom")]
    out = io.StringIO()
    output.write_text(results, 1, dry_run=False, detailed=False, out=out)
    assert out.getvalue().splitlines() == [
        "cmp-1: migrated (1 Placement calls)", "ironic: skipped (ironic)",
        "cmp-2: failed: boom",
        "1 failed, 1 migrated, 1 skipped. A node failed; the nodes before it are done; "
        "run again after fixing."]


@pytest.mark.parametrize(("dry_run", "verdict"), [(False, "Done."),
                                                  (True, "Dry run: nothing changed.")])
def test_success_says_done_or_nothing_changed(dry_run, verdict):
    out = io.StringIO()
    output.write_text([], 0, dry_run=dry_run, detailed=False, out=out)
    assert out.getvalue() == f"no nodes. {verdict}\n"


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

"""What a revert prints and the exit status its nodes' outcomes lead to."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from nova_reshape.cmd import revert_output
from nova_reshape.cmd.refusal import EXIT_CONFLICT, EXIT_FAILED, EXIT_OK, EXIT_REFUSED, Refusal
from nova_reshape.journal import RunStatus
from nova_reshape.journal.revert import NodeRevert, RevertStatus


def _node(name: str, status: RevertStatus, reason: str = "") -> NodeRevert:
    return NodeRevert(name, name, f"root-{name}", status, reason, before=[f"{name}: VGPU 4"])


@pytest.mark.parametrize(("statuses", "expected"), [
    ((RevertStatus.REVERTED, RevertStatus.ALREADY), (EXIT_OK, RunStatus.OK)),
    ((RevertStatus.CONFLICT, RevertStatus.FAILED), (EXIT_FAILED, RunStatus.FAILED)),
    ((RevertStatus.CONFLICT, RevertStatus.REFUSED), (EXIT_REFUSED, RunStatus.REFUSED)),
    ((RevertStatus.CONFLICT,), (EXIT_CONFLICT, RunStatus.CONFLICT)),
    ((), (EXIT_OK, RunStatus.OK))])
def test_the_most_severe_outcome_decides(statuses, expected):
    assert revert_output.outcome([_node(f"n{i}", s) for i, s in enumerate(statuses)]) == expected


def _args(tmp_path, report: str | None) -> argparse.Namespace:
    return argparse.Namespace(dry_run=False, output_format="text", report=report, hosts=[],
                              journal=str(tmp_path / "j.sqlite"))


def test_text_lines_and_the_report_file(tmp_path):
    nodes = [_node("a", RevertStatus.REVERTED), _node("b", RevertStatus.REFUSED,
                                                      "changed since the run: <x>")]
    out = io.StringIO()
    path = tmp_path / "r.json"
    code = revert_output.report_revert(_args(tmp_path, str(path)), "run-1", "rev-1", nodes,
                                       ["trait CUSTOM_X"], out)
    assert code == EXIT_REFUSED
    assert out.getvalue() == ("a: reverted\nb: refused: changed since the run: <x>\n"
                              "custom trait CUSTOM_X: deleted\n"
                              "revert run rev-1 (revertable: placement revert rev-1)\n")
    document = json.loads(path.read_text())
    assert document["run"]["journal"] == str(tmp_path / "j.sqlite")
    assert document["run"]["exit_class"] == "refused"
    assert document["counts"] == {"reverted": 1, "refused": 1}
    page = tmp_path / "r.html"
    revert_output.report_revert(_args(tmp_path, str(page)), "run-1", "rev-1", nodes, [], out)
    assert "changed since the run: &lt;x&gt;" in page.read_text()


def test_a_report_that_cannot_be_written_says_the_revert_is_done(tmp_path):
    (tmp_path / "r.html").mkdir()
    with pytest.raises(Refusal, match="the revert itself is done"):
        revert_output.report_revert(_args(tmp_path, str(tmp_path / "r.html")), "run-1", None,
                                    [], [], io.StringIO())

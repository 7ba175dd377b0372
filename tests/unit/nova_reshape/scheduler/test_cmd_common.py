"""Reading the JSON both explain modes take (scheduler/cmd_common.py)."""

from __future__ import annotations

import io

import pytest

from nova_reshape.scheduler.cmd_common import read_json
from nova_reshape.scheduler.errors import ScenarioError


def test_a_file_or_stdin(tmp_path, monkeypatch):
    path = tmp_path / "request.json"
    path.write_text('{"flavor": {"vcpus": 1}}')
    assert read_json(str(path)) == {"flavor": {"vcpus": 1}}
    monkeypatch.setattr("sys.stdin", io.StringIO("[1, 2]"))
    assert read_json("-") == [1, 2]


def test_unreadable_and_invalid_files_are_scenario_errors(tmp_path):
    with pytest.raises(ScenarioError, match=r"^cannot read .*nope.json: No such file"):
        read_json(str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ScenarioError, match=r"bad.json is not valid JSON: "):
        read_json(str(bad))

"""The live explain command line: JSON output, argument errors, a bad query."""

from __future__ import annotations

import json

import pytest

from nova_reshape.scheduler.cmd import main
from nova_reshape.scheduler.live.placement import PlacementError, from_database
from tests.functional.nova_reshape.scheduler.seeding import compute_node, seed


def test_cli_json_and_errors(db_url, capsys):
    seed(db_url, [compute_node("one"), compute_node(
        "tiny", inventories={"MEMORY_MB": {"total": 2048, "reserved": 1536}})])
    code = main(["explain", "--placement-database", db_url, "--flavor", "m1",
                 "--vcpus", "1", "--ram", "1024", "--disk", "1", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["selected"] == ["one"] and out["no_valid_host"] is False
    (verdict,) = out["not_candidates"]
    assert verdict["name"] == "tiny" and verdict["reason"] == "capacity"
    assert [s["name"] for s in out["request_filters"]][-1] == "owner_nova_filter"
    code = main(["explain", "--placement-database", db_url, "--vcpus", "1", "--ram", "1",
                 "--disk", "1"])
    assert code == 2 and "--flavor NAME or --extra-specs" in capsys.readouterr().err
    with pytest.raises(PlacementError):
        from_database(db_url, [("resources", "NOT_A_CLASS:1")])

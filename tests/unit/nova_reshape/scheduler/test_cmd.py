"""nova-reshape-scheduler explain: JSON shape, table, stdin and bad input."""

from __future__ import annotations

import io
import json
import pathlib

import pytest

from nova_reshape.scheduler.cmd import main

DATA = pathlib.Path(__file__).resolve().parents[3] / "data" / "scheduler-scenarios"


def _explain(capsys, *argv):
    code = main(["explain", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_output_has_exactly_the_documented_shape(capsys):
    code, out, err = _explain(capsys, str(DATA / "anti_affinity_multicreate.json"),
                              "--format", "json")
    assert code == 0 and err == ""
    result = json.loads(out)
    assert list(result) == ["error", "no_valid_host", "selected", "instances", "implementation"]
    assert result["implementation"]["name"] == "nova-reshape"
    assert result["selected"] == ["h2", "h3", "h4"]
    first = result["instances"][0]
    assert list(first) == ["index", "instance_uuid", "forced", "candidates", "filters", "passed",
                           "weighed", "subset", "selected"]
    assert first["filters"][0] == {"name": "ComputeFilter", "hosts": ["h1", "h2", "h3", "h4"]}
    assert list(first["weighed"][0]) == ["host", "weight", "weighers"]
    assert list(first["weighed"][0]["weighers"]["RAMWeigher"]) == \
        ["raw", "normalized", "multiplier"]
    second = result["instances"][1]
    assert second["filters"][0] == {"name": "ComputeFilter", "skipped": True,
                                    "hosts": ["h2", "h3", "h4"]}
    assert second["candidates"] == ["h2", "h3", "h4"]


def test_table_says_which_filter_dropped_each_host_and_why(capsys):
    code, out, _ = _explain(capsys, str(DATA / "legacy_filters.json"))
    assert code == 0
    assert "AvailabilityZoneFilter: 3 host(s) kept, 1 dropped" in out
    assert "- h4: host is in the default availability zone nova, not az1" in out
    assert "- h1: 2 vCPUs free (8 x 1 - 6 used), 4 needed" in out
    assert "- h3: host/node already tried by this request" in out
    assert "Selected: h2" in out


def test_table_shows_weights(capsys):
    _, out, _ = _explain(capsys, str(DATA / "aggregate_multipliers.json"))
    assert "RAMWeigher raw/norm x mult" in out
    assert "16384/1 x -1" in out


def test_scenario_from_stdin(capsys, monkeypatch):
    document = {"hosts": [{"host": "a", "memory_mb": 2048}, {"host": "b", "memory_mb": 4096}],
                "config": {"filter_scheduler": {"weight_classes": ["RAMWeigher"]}}}
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(document)))
    code, out, _ = _explain(capsys, "-", "--format", "json")
    assert code == 0 and json.loads(out)["selected"] == ["b"]


def test_no_valid_host_is_a_result_not_a_failure(capsys, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"hosts": [{"host": "a", "enabled": False}]}))
    code, out, _ = _explain(capsys, str(path))
    assert code == 0
    assert "- a: compute service is disabled" in out
    assert "No valid host for instance 0: ComputeFilter removed the last host(s)" in out


def test_filter_error_exits_1_and_is_reported(capsys, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"hosts": [{"host": "a"}], "request": {"scheduler_hints": {
        "query": ["~", "$host", "a"]}}, "config": {"filter_scheduler": {
            "enabled_filters": ["JsonFilter"]}}}))
    code, out, _ = _explain(capsys, str(path), "--format", "json")
    assert code == 1
    assert json.loads(out)["error"] == {"stage": "filter", "filter": "JsonFilter",
                                        "type": "KeyError", "message": "'~'",
                                        "instance_index": 0}
    code, out, _ = _explain(capsys, str(path))
    assert code == 1 and "ERROR during filter JsonFilter (instance 0): KeyError" in out


def test_missing_file(capsys, tmp_path):
    code, out, err = _explain(capsys, str(tmp_path / "nope.json"))
    assert code == 2 and out == ""
    assert err.startswith("nova-reshape-scheduler: invalid scenario: cannot read")
    assert err.count("\n") == 1


def test_invalid_json(capsys, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    code, _, err = _explain(capsys, str(path))
    assert code == 2 and "is not valid JSON" in err


def test_invalid_scenario_in_json_mode_prints_a_scenario_error_result(capsys, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"config": {"filter_scheduler": {"pci_weight_multiplier": -1}}}))
    code, out, err = _explain(capsys, str(path), "--format", "json")
    assert code == 2 and "pci_weight_multiplier" in err
    result = json.loads(out)
    assert result["error"]["stage"] == "scenario" and result["instances"] == []


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["explain"])
    assert caught.value.code == 2
    with pytest.raises(SystemExit):
        main(["explain", "x.json", "--format", "yaml"])


def test_table_lists_what_each_request_filter_added(capsys, tmp_path):
    scenario = {"hosts": [{"host": "h1", "memory_mb": 4096}],
                "config": {"scheduler": {"query_placement_for_image_type_support": True}},
                "request": {"image": {"disk_format": "raw"},
                            "flavor": {"extra_specs": {"hw:tpm_version": "2.0",
                                                       "hw:tpm_secret_security": "cloud"}}}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario))
    code, out, _ = _explain(capsys, str(path))
    assert code == 0
    assert "require_image_type_support: root_required += COMPUTE_IMAGE_TYPE_RAW" in out
    assert "compute_status_filter: root_forbidden += COMPUTE_STATUS_DISABLED" in out
    assert "tpm_secret_security_filter: REFUSED the request: TPM secret security 'cloud'" in out
    assert "owner_nova_filter" not in out  # the chain stopped at the refusal


@pytest.mark.parametrize(("where", "status"), [
    (["--placement-database", "sqlite:////nonexistent-dir/placement.sqlite"], 2),
    (["--placement-database", "postgresql+psycopg://p:secret@127.0.0.1:1/placement"], 3),
    (["--placement", "http://127.0.0.1:9/placement"], 3),
])
def test_live_mode_without_a_usable_placement_exits_2_or_3(capsys, where, status):
    code, out, err = _explain(capsys, *where, "--flavor", "m1", "--vcpus", "1", "--ram", "512",
                              "--disk", "1")
    assert code == status and out == "" and err.count("\n") == 1 and "secret" not in err
    assert err.startswith("nova-reshape-scheduler: ") and "Traceback" not in err


def test_live_mode_argument_errors_exit_2(capsys):
    code, _, err = _explain(capsys, "--placement", "http://x", "--flavor", "m1",
                            "--vcpus", "1", "--ram", "512", "--disk", "1",
                            "--extra-specs", "[1]")
    assert code == 2 and "--extra-specs must be a JSON object" in err
    with pytest.raises(SystemExit) as info:
        main(["explain", "s.json", "--placement", "http://x"])
    assert info.value.code == 2

"""A schedule's result as the documented JSON object and as a table (scheduler/result.py)."""

from __future__ import annotations

from nova_reshape.scheduler.result import render_table, result_to_dict, scenario_error_dict
from tests.unit.nova_reshape.scheduler.helpers import host, schedule

CONFIG = {"filter_scheduler": {"enabled_filters": ["ComputeFilter"],
                               "weight_classes": ["RAMWeigher"]}}


def test_json_names_every_step_and_the_implementation():
    result = result_to_dict(schedule([host("a"), host("b", memory_mb=8192)], config=CONFIG))
    assert result["selected"] == ["a"] and result["error"] is None
    (instance,) = result["instances"]
    assert instance["filters"] == [{"name": "ComputeFilter", "hosts": ["a", "b"]}]
    assert [entry["host"] for entry in instance["weighed"]] == ["a", "b"]
    assert set(instance["weighed"][0]["weighers"]["RAMWeigher"]) >= {"raw", "normalized"}
    assert result["implementation"]["name"] == "nova-reshape"


def test_the_table_gives_the_reason_each_host_was_dropped():
    hosts = [host("a"), host("off", enabled=False, disabled_reason="maintenance")]
    table = render_table(schedule(hosts, config=CONFIG), "two hosts")
    assert table.startswith("Scenario: two hosts\n")
    assert "  ComputeFilter: 1 host(s) kept, 1 dropped\n" in table
    assert "      - off: compute service is disabled (maintenance)\n" in table
    assert table.endswith("Selected: a\n")


def test_the_table_names_the_filter_that_removed_the_last_host():
    table = render_table(schedule([host("off", enabled=False)], config=CONFIG))
    assert "  no host left after ComputeFilter; later filters not run\n" in table
    assert table.endswith("No valid host for instance 0: ComputeFilter removed the last "
                          "host(s)\n")


def test_a_scenario_that_cannot_load_is_an_error_object():
    result = scenario_error_dict("hosts: expected a list")
    assert result["error"] == {"stage": "scenario", "type": "ScenarioError",
                               "message": "hosts: expected a list", "instance_index": None}
    assert (result["selected"], result["instances"], result["no_valid_host"]) == ([], [], False)

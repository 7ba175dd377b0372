"""The scheduler's errors: one base, the scenario stage's family, nova's messages."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler import errors


@pytest.mark.parametrize("error", [errors.ScenarioError, errors.ComputeHostMetricNotFound,
                                   errors.OrphanedObjectError, errors.NoValidHost])
def test_every_error_is_a_scheduler_error(error):
    assert issubclass(error, errors.SchedulerError)


def test_configuration_errors_are_scenario_errors():
    # the explain result reports both at the "scenario" stage
    assert issubclass(errors.PluginNotFound, errors.ConfigError)
    assert issubclass(errors.ConfigError, errors.ScenarioError)


def test_a_missing_metric_names_host_node_and_metric():
    error = errors.ComputeHostMetricNotFound("cmp-1", "cmp-1.example.org", "cpu.frequency")
    assert str(error) == "Metric cpu.frequency not found on host cmp-1, node cmp-1.example.org"
    assert (error.host, error.node, error.name) == ("cmp-1", "cmp-1.example.org",
                                                    "cpu.frequency")


def test_the_orphaned_instance_message_is_novas():
    assert str(errors.OrphanedObjectError()) == \
        "Cannot call obj_load_attr on orphaned Instance object"


def test_no_valid_host_keeps_the_filter_and_a_copy_of_the_reasons():
    reasons = {"cmp-1": "RamFilter"}
    error = errors.NoValidHost("no host", instance_index=1, filter_name="RamFilter",
                               reasons=reasons)
    reasons["cmp-2"] = "later"
    assert (str(error), error.instance_index, error.filter_name, error.reasons) == (
        "no host", 1, "RamFilter", {"cmp-1": "RamFilter"})
    assert errors.NoValidHost("none").reasons == {}

"""What the request pre-filters added, rendered for explain (scheduler/prefilter_report.py)."""

from __future__ import annotations

import json
import pathlib

from nova_reshape.scheduler import prefilter_report
from nova_reshape.scheduler.prefilters import PrefilterStep
from nova_reshape.scheduler.scenario import load_scenario

SCENARIO = pathlib.Path(__file__).resolve().parents[3] / "data" / "scheduler-scenarios" / \
    "cross_cell.json"


def test_each_step_is_one_line():
    steps = [PrefilterStep("compute_status_filter", ran=True,
                           added={"root_forbidden": ["COMPUTE_STATUS_DISABLED"]}),
             PrefilterStep("require_tenant_aggregate"),
             PrefilterStep("accelerators_filter", ran=True),
             PrefilterStep("routed_networks_filter", ran=True, failed="network n1 is gone")]
    assert prefilter_report.render_steps(steps) == [
        "Request filters (nova's order):",
        "  compute_status_filter: root_forbidden += COMPUTE_STATUS_DISABLED",
        "  require_tenant_aggregate: not applied",
        "  accelerators_filter: nothing to add",
        "  routed_networks_filter: REFUSED the request: network n1 is gone"]
    assert prefilter_report.steps_to_dicts(steps[3:]) == [
        {"name": "routed_networks_filter", "ran": True, "added": {},
         "failed": "network n1 is gone"}]


def test_the_scenarios_request_is_left_as_it_was():
    scenario = load_scenario(json.loads(SCENARIO.read_text()), now=0.0)
    steps = prefilter_report.scenario_request_filters(scenario)
    assert {step.name for step in steps if step.ran} >= {"compute_status_filter"}
    assert scenario.spec.root_forbidden == set()

"""Rendering what the request pre-filters added, for ``explain`` (text and JSON)."""

from __future__ import annotations

import copy
from typing import Any

from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler.prefilters import PrefilterStep
from nova_reshape.scheduler.scenario import Scenario


def scenario_request_filters(scenario: Scenario) -> list[PrefilterStep]:
    """The pre-filters run on a copy of the scenario's request (its hosts are unaffected).

    A scenario has no Placement, so what they add only shows the query nova
    would send; a refusal is reported as the last step.
    """
    spec = copy.deepcopy(scenario.spec)
    try:
        return prefilters.run_prefilters(spec, aggregates=scenario.aggregates,
                                         conf=scenario.conf)
    except prefilters.RequestFilterFailed as error:
        return error.steps


def steps_to_dicts(steps: list[PrefilterStep]) -> list[dict[str, Any]]:
    return [step.to_dict() for step in steps]


def render_steps(steps: list[PrefilterStep]) -> list[str]:
    """One line per pre-filter: what it added, ``not applied``, or why it refused."""
    lines = ["Request filters (nova's order):"]
    for step in steps:
        if step.failed is not None:
            lines.append(f"  {step.name}: REFUSED the request: {step.failed}")
            continue
        if not step.ran:
            lines.append(f"  {step.name}: not applied")
            continue
        added = "; ".join(f"{key} += {', '.join(values)}"
                          for key, values in step.added.items())
        lines.append(f"  {step.name}: {added or 'nothing to add'}")
    return lines

"""Rendering a ScheduleResult: the documented JSON shape and a readable table.

The JSON form is exactly the ``scheduler-scenario`` result format, so runs
can be compared with another implementation; reasons for dropped hosts are
only in the table (the format has no field for them).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from nova_reshape.scheduler.pipeline import InstanceTrace, ScheduleResult

IMPLEMENTATION = "nova-reshape"


def _version() -> str:
    try:
        return metadata.version("nova-reshape")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def _labels(hosts: Any) -> list[str] | None:
    return None if hosts is None else [host.label for host in hosts]


def instance_to_dict(trace: InstanceTrace) -> dict[str, Any]:
    filters = []
    for step in trace.filters:
        entry: dict[str, Any] = {"name": step.name}
        if step.skipped:
            entry["skipped"] = True
        entry["hosts"] = _labels(step.hosts)
        filters.append(entry)
    return {
        "index": trace.index,
        "instance_uuid": trace.instance_uuid,
        "forced": trace.forced,
        "candidates": _labels(trace.candidates),
        "filters": filters,
        "passed": _labels(trace.passed),
        "weighed": [{"host": w.host.label, "weight": w.weight, "weighers": w.scores()}
                    for w in trace.weighed],
        "subset": _labels(trace.subset),
        "selected": trace.selected.label if trace.selected is not None else None,
    }


def result_to_dict(result: ScheduleResult) -> dict[str, Any]:
    """The documented result object (``explain --format json``)."""
    return {
        "error": result.error,
        "no_valid_host": result.no_valid_host,
        "selected": _labels(result.selected),
        "instances": [instance_to_dict(trace) for trace in result.instances],
        "implementation": {"name": IMPLEMENTATION, "version": _version()},
    }


def scenario_error_dict(message: str, stage: str = "scenario",
                        error_type: str = "ScenarioError") -> dict[str, Any]:
    """The result object for a scenario, or a live cloud's ``stage`` ("input":
    arguments or a database), that could not be loaded."""
    return {
        "error": {"stage": stage, "type": error_type, "message": message,
                  "instance_index": None},
        "no_valid_host": False,
        "selected": [],
        "instances": [],
        "implementation": {"name": IMPLEMENTATION, "version": _version()},
    }


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _host_list(labels: list[str] | None, limit: int = 12) -> str:
    if labels is None:
        return "(filters skipped)"
    if not labels:
        return "(none)"
    shown = ", ".join(labels[:limit])
    return shown + (f", ... ({len(labels) - limit} more)" if len(labels) > limit else "")


def render_table(result: ScheduleResult, description: str = "") -> str:
    """Human-readable explanation: every filter, every dropped host and why, weights."""
    lines: list[str] = []
    if description:
        lines.append(f"Scenario: {description}")
    for trace in result.instances:
        lines.append("")
        lines.append(f"Instance {trace.index} ({trace.instance_uuid})")
        for label, why in trace.prefilter_rejected.items():
            lines.append(f"  pre-filter dropped {label}: {why}")
        if trace.forced:
            lines.append(f"  forced hosts, filters skipped: {_host_list(_labels(trace.passed))}")
        else:
            candidates = trace.candidates or []
            lines.append(f"  candidates ({len(candidates)}): {_host_list(_labels(candidates))}")
        for step in trace.filters:
            if step.skipped:
                lines.append(f"  {step.name}: skipped (runs once per request), "
                             f"{len(step.hosts)} host(s) kept")
                continue
            lines.append(f"  {step.name}: {len(step.hosts)} host(s) kept"
                         + (f", {len(step.rejected)} dropped" if step.rejected else ""))
            for label, why in step.rejected.items():
                lines.append(f"      - {label}: {why}")
            if not step.hosts:
                lines.append(f"  no host left after {step.name}; later filters not run")
        lines.append(f"  passed ({len(trace.passed)}): {_host_list(_labels(trace.passed))}")
        if trace.weighed:
            lines.extend(_weights_table(trace))
        if trace.subset:
            lines.append(f"  subset: {_host_list(_labels(trace.subset))}")
        if trace.selected is not None:
            lines.append(f"  selected: {trace.selected.label}")
    lines.append("")
    if result.error:
        error = result.error
        where = error.get("filter") or error.get("weigher") or ""
        lines.append(f"ERROR during {error['stage']} {where} (instance "
                     f"{error.get('instance_index')}): {error['type']}: {error['message']}")
    elif result.no_valid_host:
        trace = result.instances[-1]
        culprit = trace.emptied_by()
        lines.append(f"No valid host for instance {trace.index}"
                     + (f": {culprit} removed the last host(s)" if culprit else ""))
    else:
        lines.append(f"Selected: {', '.join(_labels(result.selected) or [])}")
    return "\n".join(lines) + "\n"


def _weights_table(trace: InstanceTrace) -> list[str]:
    first = trace.weighed[0].scores()
    names = list(first)
    rows = [["host", "weight"] + [f"{n} raw/norm x mult" for n in names]]
    for weighed in trace.weighed:
        scores = weighed.scores()
        row = [weighed.host.label, _fmt(weighed.weight)]
        for name in names:
            s = scores[name]
            row.append(f"{_fmt(s['raw'])}/{_fmt(s['normalized'])} x {_fmt(s['multiplier'])}")
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = ["  weighed:"]
    for row in rows:
        out.append("    " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row))
                   .rstrip())
    if not names:
        out.append("    (one host or none: not weighed, weight 0.0)"
                   if len(trace.weighed) <= 1 else "    (no weighers configured)")
    return out

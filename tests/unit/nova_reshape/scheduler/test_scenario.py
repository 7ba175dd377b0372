"""The example scenarios in tests/data give their documented ``expect`` results."""

from __future__ import annotations

import json
import pathlib

import pytest

from nova_reshape.scheduler.pipeline import FilterScheduler
from nova_reshape.scheduler.result import result_to_dict
from nova_reshape.scheduler.scenario import load_scenario

DATA = pathlib.Path(__file__).resolve().parents[3] / "data" / "scheduler-scenarios"
FILES = sorted(DATA.glob("*.json"))


def test_the_example_scenarios_are_present():
    assert len(FILES) >= 11


def _run(path: pathlib.Path) -> tuple[dict, dict]:
    document = json.loads(path.read_text())
    loaded = load_scenario(document, now=1_700_000_000.0)
    result = FilterScheduler(loaded.conf, now=loaded.now).schedule(
        loaded.hosts, loaded.spec, loaded.instance_uuids, subset_choices=loaded.subset_choices)
    return result_to_dict(result), document["expect"]


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario_expectations(path):
    out, expect = _run(path)
    first = out["instances"][0]
    assert set(expect) <= {"passed", "order", "selected", "weights", "normalized", "raw",
                           "filter_hosts", "error", "nova34_result"}
    if "error" in expect:
        assert out["error"] is not None
        for key, value in expect["error"].items():
            assert out["error"][key] == value
    else:
        assert out["error"] is None
    if "passed" in expect:
        assert first["passed"] == expect["passed"]
    if "order" in expect:
        assert [w["host"] for w in first["weighed"]] == expect["order"]
    if "selected" in expect:
        assert out["selected"] == expect["selected"]
    weighed = {w["host"]: w for w in first["weighed"]}
    for host, weight in expect.get("weights", {}).items():
        assert weighed[host]["weight"] == pytest.approx(weight, abs=1e-6)
    for key in ("normalized", "raw"):
        for weigher, values in expect.get(key, {}).items():
            for host, value in values.items():
                assert weighed[host]["weighers"][weigher][key] == pytest.approx(value, abs=1e-6)
    if "filter_hosts" in expect:
        got = {f["name"]: f["hosts"] for f in first["filters"]}
        assert got == expect["filter_hosts"]


NOVA34 = [f for f in FILES if "nova34_result" in json.loads(f.read_text())["expect"]]


def _assert_same(ours, nova, path="result"):
    """Equal JSON documents, numbers (not booleans) within 1e-9."""
    if isinstance(nova, dict):
        assert isinstance(ours, dict) and set(ours) == set(nova), path
        for key, value in nova.items():
            _assert_same(ours[key], value, f"{path}.{key}")
    elif isinstance(nova, list):
        assert isinstance(ours, list) and len(ours) == len(nova), path
        for index, (mine, theirs) in enumerate(zip(ours, nova, strict=True)):
            _assert_same(mine, theirs, f"{path}[{index}]")
    elif isinstance(nova, float | int) and not isinstance(nova, bool):
        assert not isinstance(ours, bool) and ours == pytest.approx(nova, abs=1e-9), path
    else:
        assert ours == nova, path


def test_some_scenarios_carry_nova34_full_result():
    assert len(NOVA34) >= 5


@pytest.mark.parametrize("path", NOVA34, ids=[f.stem for f in NOVA34])
def test_full_result_equals_nova34(path):
    """The whole ``--format json`` document is nova 34's, weights within 1e-9."""
    out, expect = _run(path)
    out.pop("implementation")
    _assert_same(out, expect["nova34_result"])


def test_every_expect_key_is_checked_by_some_scenario():
    keys = set()
    for path in FILES:
        keys |= set(json.loads(path.read_text())["expect"])
    assert {"passed", "order", "selected", "weights", "normalized", "raw",
            "filter_hosts"} <= keys

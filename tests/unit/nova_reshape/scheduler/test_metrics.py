"""Monitor metrics as nova stores them: integers, percents times 100 (scheduler/metrics.py)."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.metrics import load_metrics


def test_percent_metrics_are_truncated_after_times_100():
    assert load_metrics({"cpu.percent": 0.29, "cpu.frequency": 2400.9}) == {
        "cpu.percent": 28, "cpu.frequency": 2400}


def test_a_list_of_name_value_entries_or_nothing():
    assert load_metrics([{"name": "cpu.idle.percent", "value": 0.5}]) == {
        "cpu.idle.percent": 50}
    assert load_metrics(None) == {}


@pytest.mark.parametrize(("raw", "message"), [
    ({"cpu.magic": 1}, "unknown metric 'cpu.magic'; valid names: cpu.frequency, "),
    ({"cpu.frequency": True}, "metric cpu.frequency value must be a number, got True"),
    ({"cpu.frequency": "fast"}, "value must be a number"),
    ([{"name": "cpu.frequency"}], "needs name and value"),
    ("cpu.frequency=1", "metrics must be an object or a list"),
])
def test_invalid_metrics(raw, message):
    with pytest.raises(ScenarioError, match=message):
        load_metrics(raw)

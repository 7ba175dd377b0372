"""Why a request found nothing: one debug line of counters per request."""

from __future__ import annotations

import logging

import pytest

from tests.functional.placement_wsgi.candidates.world import World

ENGINE_LOG = "placement_wsgi.candidates.engine"


@pytest.fixture
def two_trees(database) -> World:
    world = World(database)
    world.provider("cn1", inventory={"VCPU": 4})
    world.provider("cn2", inventory={"VCPU": 4, "MEMORY_MB": 512})
    return world


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == ENGINE_LOG]


def test_one_line_of_counters_per_request(two_trees: World,
                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=ENGINE_LOG)
    body = two_trees.candidates("resources=VCPU:1,MEMORY_MB:1024")
    assert body["allocation_requests"] == []
    assert _lines(caplog) == [
        "allocation candidates: 0 found; slot 0: anchors with options: 2, "
        "slot 1: anchors with options: 0, viable anchors: 0"]


def test_an_anchor_without_a_candidate_is_counted_once(database,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    world = World(database)
    world.provider("cn1", inventory={"VCPU": 4})
    world.provider("numa0", "cn1", inventory={"VCPU": 1})
    caplog.set_level(logging.DEBUG, logger=ENGINE_LOG)
    # both groups fit numa0 or cn1 alone, but isolate needs two providers of
    # VCPU:2 and only cn1 has 2 free
    body = world.candidates("resources1=VCPU:2&resources2=VCPU:2&group_policy=isolate")
    assert body["allocation_requests"] == []
    (line,) = _lines(caplog)
    assert "0 found" in line and "viable anchors: 1" in line
    assert "anchors infeasible (sums or isolate): 1" in line


def test_nothing_is_logged_above_debug(two_trees: World,
                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=ENGINE_LOG)
    two_trees.candidates("resources=VCPU:1")
    assert _lines(caplog) == []

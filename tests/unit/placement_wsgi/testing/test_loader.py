"""Fixture lookup by name, bound to a database server, and case results."""

from __future__ import annotations

import types
import unittest

from gabbi import fixture

from placement_wsgi.testing import gabbits, loader
from placement_wsgi.testing.fixtures import APIFixture


class MineFixture(APIFixture):
    pass


class NotAnAPIFixture(fixture.GabbiFixture):
    pass


def test_every_upstream_name_is_found() -> None:
    namespace = loader.fixture_namespace()
    for name in ("APIFixture", "AllocationFixture", "SharedStorageFixture",
                 "NonSharedStorageFixture", "NUMAAggregateFixture", "NUMANetworkFixture",
                 "DeepNUMANetworkFixture", "GranularFixture", "NeutronQoSMultiSegmentFixture",
                 "CORSFixture", "LegacyRBACPolicyFixture", "SecureRBACPolicyFixture",
                 "OpenPolicyFixture"):
        assert getattr(namespace, name) is getattr(gabbits, name)


def test_binding_to_a_server_subclasses_only_api_fixtures() -> None:
    module = types.SimpleNamespace(MineFixture=MineFixture, NotAnAPIFixture=NotAnAPIFixture)
    namespace = loader.fixture_namespace("sqlite", [module])
    assert namespace.MineFixture.database_server == "sqlite"
    assert issubclass(namespace.MineFixture, MineFixture)
    assert namespace.GranularFixture.__name__ == "GranularFixture"
    assert issubclass(namespace.GranularFixture, gabbits.GranularFixture)
    assert namespace.NotAnAPIFixture is NotAnAPIFixture
    assert gabbits.GranularFixture.database_server is None


def test_the_caller_s_fixtures_win_a_name_clash() -> None:
    module = types.SimpleNamespace(CORSFixture=MineFixture)
    assert loader.fixture_namespace(None, [module]).CORSFixture is MineFixture


def _result(**lists: list) -> unittest.TestResult:
    result = unittest.TestResult()
    for name, value in lists.items():
        setattr(result, name, value)
    return result


def test_case_results() -> None:
    assert loader._result_of(_result()) == loader.CaseResult(loader.Outcome.PASSED)
    assert loader._result_of(_result(failures=[(None, "boom")])) == loader.CaseResult(
        loader.Outcome.FAILED, "boom")
    assert loader._result_of(_result(skipped=[(None, "why")])).outcome is loader.Outcome.SKIPPED
    assert loader._result_of(
        _result(expectedFailures=[(None, "x")])).outcome is loader.Outcome.EXPECTED_FAILURE

"""Run every gabbi YAML file under gabbits/ on every enabled engine.

Each file is one suite with a fresh database; each test in it is one
pytest test, named ``<engine>/<file>/<test name>``. Tests of one file run
in order; selecting one test (``-k``) runs the tests before it first, as
gabbi does.
"""

from __future__ import annotations

import os
import pathlib
import types
import unittest

import pytest
from gabbi import handlers, suitemaker, utils

from tests.fixtures import gabbi as gabbi_fixtures
from tests.fixtures.databases import enabled_engines

GABBITS = pathlib.Path(__file__).resolve().parents[3] / "gabbits"


def _fixture_module(engine: str) -> types.SimpleNamespace:
    """The fixture classes, bound to ``engine`` through the environment."""
    namespace = types.SimpleNamespace()
    for name in dir(gabbi_fixtures):
        value = getattr(gabbi_fixtures, name)
        if isinstance(value, type) and issubclass(value, gabbi_fixtures.APIFixture):

            def start(self, _base=value, _engine=engine):
                os.environ["NOVA_RESHAPE_GABBI_ENGINE"] = _engine
                _base.start_fixture(self)

            setattr(namespace, name, type(name, (value,), {"start_fixture": start}))
    return namespace


def _build_cases() -> list[tuple[str, object, object]]:
    """(id, suite, test) for every test of every file on every engine."""
    handler_objects = [handler() for handler in handlers.RESPONSE_HANDLERS]
    loader = unittest.TestLoader()
    cases = []
    for engine in enabled_engines():
        fixture_module = _fixture_module(engine)
        for path in sorted(GABBITS.glob("*.yaml")):
            suite_dict = utils.load_yaml(yaml_file=str(path), safe=True)
            suite = suitemaker.test_suite_from_dict(
                loader, path.stem.replace("-", ""), suite_dict, str(GABBITS),
                "placement.test", None, fixture_module, lambda: gabbi_fixtures.APP,
                handlers=handler_objects, test_loader_name="tests")
            for test in suite:
                name = test.test_data["name"]
                cases.append((f"{engine}/{path.stem}/{name}", suite, test))
    return cases


_CASES = _build_cases()


class _SuiteRunner:
    """Starts a file's fixtures before its first test and stops them after."""

    def __init__(self) -> None:
        self.current = None

    def enter(self, suite) -> None:
        if suite is self.current:
            return
        self.leave()
        result = unittest.TestResult()
        suite.start(result)
        self.current = suite
        if result.skipped:
            pytest.skip(result.skipped[0][1])

    def leave(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None


_RUNNER = _SuiteRunner()


@pytest.fixture(scope="module", autouse=True)
def _stop_last_suite():
    yield
    _RUNNER.leave()


@pytest.mark.parametrize("suite, test", [case[1:] for case in _CASES],
                         ids=[case[0] for case in _CASES])
def test_gabbi(suite, test) -> None:
    _RUNNER.enter(suite)
    result = unittest.TestResult()
    test.run(result)
    for _test, trace in result.errors + result.failures:
        pytest.fail(trace, pytrace=False)
    for _test, trace in result.unexpectedSuccesses and [(None, "unexpected success")] or []:
        pytest.fail(trace, pytrace=False)
    if result.skipped:
        pytest.skip(result.skipped[0][1])
    if result.expectedFailures:
        pytest.xfail("expected failure")

"""Turn directories of gabbi YAML into tests against an in-process Placement.

Two shapes, one set of fixtures:

* :func:`load_tests`: gabbi's own ``build_tests`` with the intercept and
  fixtures filled in; a ``unittest.TestSuite`` of one suite per file, whose
  fixtures gabbi starts and stops (``python -m unittest``, stestr, ...).
* :func:`gabbi_cases`: one :class:`GabbiCase` per test, in file order, for
  runners that call tests one by one (pytest). :data:`RUNNER` starts a
  file's fixtures before its first test runs and stops them before another
  file's test runs (or at :meth:`SuiteRunner.leave`). Selecting a single
  test runs the tests before it in its file first, as gabbi does.

Fixtures named in YAML are looked up in :func:`fixture_namespace`: the
fixtures of this package, then the caller's ``fixture_modules`` (which win
on a name clash). ``database_server`` binds every :class:`APIFixture` to
one server (see placement_wsgi.testing.databases); left ``None``, each
file's database is on the server ``PLACEMENT_WSGI_TEST_DB_SERVER`` names
when the fixture starts, else SQLite.
"""

from __future__ import annotations

import enum
import pathlib
import types
import unittest
from collections.abc import Iterable
from typing import Any, NamedTuple

from gabbi import driver, fixture, handlers, suitemaker, utils

from placement_wsgi.testing import datasets, fixtures, network_datasets
from placement_wsgi.testing.fixtures import APIFixture, setup_app

#: Where fixture names are looked up first.
PACKAGE_FIXTURE_MODULES = (fixtures, datasets, network_datasets)

#: Host name of intercepted requests (any name does: nothing is resolved).
HOST = "placement.test"

#: Base of the generated test class names.
TEST_LOADER_NAME = "placement_gabbits"


def fixture_namespace(database_server: str | None = None,
                      fixture_modules: Iterable[Any] = ()) -> types.SimpleNamespace:
    """Every gabbi fixture class by name; APIFixtures bound to ``database_server``."""
    found: dict[str, type] = {}
    for module in (*PACKAGE_FIXTURE_MODULES, *fixture_modules):
        for name, value in vars(module).items():
            if isinstance(value, type) and issubclass(value, fixture.GabbiFixture):
                found[name] = value
    if database_server is not None:
        found = {name: (type(name, (value,), {"database_server": database_server,
                                               "__module__": value.__module__})
                        if issubclass(value, APIFixture) else value)
                 for name, value in found.items()}
    return types.SimpleNamespace(**found)


def load_tests(path: str | pathlib.Path, loader: unittest.TestLoader | None = None, *,
               database_server: str | None = None, fixture_modules: Iterable[Any] = (),
               test_loader_name: str = TEST_LOADER_NAME,
               **build_options: Any) -> unittest.TestSuite:
    """The YAML files of ``path`` as a unittest suite (one sub-suite per file).

    ``build_options`` go to :func:`gabbi.driver.build_tests` (``prefix``,
    ``inner_fixtures``, ``verbose``, ``response_handlers``, ...).
    """
    return driver.build_tests(
        str(path), loader or unittest.TestLoader(), intercept=setup_app,
        fixture_module=fixture_namespace(database_server, fixture_modules),
        test_loader_name=test_loader_name, **build_options)


class GabbiCase(NamedTuple):
    """One test of one YAML file; ``name`` is ``<file stem>/<test name>``."""

    name: str
    suite: unittest.TestSuite
    test: unittest.TestCase

    def run(self) -> CaseResult:
        """Run it with :data:`RUNNER` (starting its file's fixtures if needed)."""
        return RUNNER.run(self)


def suite_from_dict(name: str, suite_dict: dict[str, Any], directory: str,
                    namespace: types.SimpleNamespace,
                    handler_objects: list[Any] | None = None) -> unittest.TestSuite:
    """gabbi's suite for one parsed YAML file, intercepted, with fixtures from ``namespace``."""
    return suitemaker.test_suite_from_dict(
        unittest.TestLoader(), name.replace("-", ""), suite_dict, directory,
        HOST, None, namespace, setup_app,
        handlers=handler_objects or [handler() for handler in handlers.RESPONSE_HANDLERS],
        test_loader_name=TEST_LOADER_NAME)


def file_cases(yaml_path: str | pathlib.Path, namespace: types.SimpleNamespace,
               safe_yaml: bool = True) -> list[GabbiCase]:
    """The tests of one YAML file, in order, with fixtures from ``namespace``."""
    yaml_path = pathlib.Path(yaml_path)
    suite = suite_from_dict(yaml_path.stem,
                            utils.load_yaml(yaml_file=str(yaml_path), safe=safe_yaml),
                            str(yaml_path.parent), namespace)
    return [GabbiCase(f"{yaml_path.stem}/{test.test_data['name']}", suite, test)
            for test in suite]


def gabbi_cases(path: str | pathlib.Path, *, database_server: str | None = None,
                fixture_modules: Iterable[Any] = (), safe_yaml: bool = True) -> list[GabbiCase]:
    """Every test of every ``*.yaml`` file of ``path`` (files sorted by name)."""
    namespace = fixture_namespace(database_server, fixture_modules)
    return [case for yaml_path in sorted(pathlib.Path(path).glob("*.yaml"))
            for case in file_cases(yaml_path, namespace, safe_yaml)]


class Outcome(enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    EXPECTED_FAILURE = "expected failure"
    UNEXPECTED_SUCCESS = "unexpected success"


class CaseResult(NamedTuple):
    outcome: Outcome
    detail: str = ""


def _result_of(result: unittest.TestResult) -> CaseResult:
    if result.errors or result.failures:
        return CaseResult(Outcome.FAILED, "\n".join(
            trace for _test, trace in result.errors + result.failures))
    if result.unexpectedSuccesses:
        return CaseResult(Outcome.UNEXPECTED_SUCCESS, "unexpected success")
    if result.skipped:
        return CaseResult(Outcome.SKIPPED, result.skipped[0][1])
    if result.expectedFailures:
        return CaseResult(Outcome.EXPECTED_FAILURE, "expected failure")
    return CaseResult(Outcome.PASSED)


class SuiteRunner:
    """Runs cases one at a time, keeping the fixtures of one file started."""

    def __init__(self) -> None:
        self.current: Any = None
        self.skip_reason = ""

    def enter(self, suite: Any) -> None:
        """Make ``suite``'s fixtures the running ones."""
        if suite is self.current:
            return
        self.leave()
        result = unittest.TestResult()
        try:
            suite.start(result)
        except BaseException:
            suite.stop()  # the fixtures that did start
            raise
        self.current = suite
        self.skip_reason = result.skipped[0][1] if result.skipped else ""

    def leave(self) -> None:
        """Stop the running file's fixtures, if any."""
        if self.current is not None:
            current, self.current = self.current, None
            current.stop()

    def run(self, case: GabbiCase) -> CaseResult:
        self.enter(case.suite)
        if self.skip_reason:
            return CaseResult(Outcome.SKIPPED, self.skip_reason)
        result = unittest.TestResult()
        case.test.run(result)
        return _result_of(result)


#: The runner of this process (fixtures of one file at a time, as APP serves one app).
RUNNER = SuiteRunner()

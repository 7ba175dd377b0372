"""pytest plugin ``placement_wsgi`` (an entry point): gabbi YAML and a client fixture.

* ``pytest --placement-gabbits DIR`` (repeatable) collects the ``*.yaml``
  files of DIR as tests against an in-process Placement (one collector per
  file, one item per test; a file's fixtures run around its tests).
* Modules running ``gabbi_cases`` one by one (``case.run()``, then
  :func:`report_case`) get the last file's fixtures stopped at their end.
* The ``placement`` fixture: a :class:`~placement_wsgi.client.PlacementClient`
  wired in-process (``PlacementDirect``) to an app on a fresh throwaway
  database, requests at the latest microversion unless one is given.

The database server is the one ``PLACEMENT_WSGI_TEST_DB_SERVER`` names
(SQLite when unset). gabbi is imported only when YAML is collected, so the
plugin costs nothing to projects that do not use it.
"""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from placement_wsgi.client import PlacementClient

if TYPE_CHECKING:
    from placement_wsgi.testing.loader import CaseResult

OPTION = "--placement-gabbits"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("placement").addoption(
        OPTION, action="append", default=[], metavar="DIR", dest="placement_gabbits",
        help="run the gabbi YAML files of DIR against an in-process Placement")


def _inside(path: pathlib.Path, directory: pathlib.Path) -> bool:
    return path == directory or directory in path.parents


def pytest_configure(config: pytest.Config) -> None:
    directories = [pathlib.Path(name).resolve() for name in config.option.placement_gabbits]
    if not directories:
        return
    # Collect the directories even when the arguments (or testpaths) leave them out.
    collected = [pathlib.Path(arg.split("::")[0]).resolve() for arg in config.args]
    config.args.extend(str(directory) for directory in directories
                       if not any(_inside(directory, path) for path in collected))
    config.pluginmanager.register(
        _YamlHook(yaml_collector(directories, None, ())), "placement-gabbits-collector")


class _YamlHook:
    def __init__(self, hook: Callable[..., Any]) -> None:
        self.pytest_collect_file = hook


def yaml_collector(directories: list[pathlib.Path], database_server: str | None,
                   fixture_modules: Iterable[Any]) -> Callable[..., Any]:
    """A ``pytest_collect_file`` implementation for the YAML files of ``directories``."""
    resolved = [directory.resolve() for directory in directories]

    def pytest_collect_file(file_path: pathlib.Path, parent: pytest.Collector) -> Any:
        if file_path.suffix == ".yaml" and file_path.parent.resolve() in resolved:
            node = GabbiYamlFile.from_parent(parent, path=file_path)
            node.database_server = database_server
            node.fixture_modules = tuple(fixture_modules)
            return node
        return None

    return pytest_collect_file


class GabbiYamlFile(pytest.File):
    """One YAML file: its tests in order; its fixtures stop after the last one."""

    database_server: str | None = None
    fixture_modules: tuple[Any, ...] = ()

    def collect(self) -> Iterator[pytest.Item]:
        from placement_wsgi.testing.loader import file_cases, fixture_namespace

        namespace = fixture_namespace(self.database_server, self.fixture_modules)
        for case in file_cases(self.path, namespace):
            yield GabbiItem.from_parent(self, name=case.test.test_data["name"], case=case)

    def teardown(self) -> None:
        from placement_wsgi.testing.loader import RUNNER

        RUNNER.leave()


class GabbiItem(pytest.Item):
    """One gabbi test."""

    def __init__(self, *, case: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        report_case(self.case.run())

    def reportinfo(self) -> tuple[pathlib.Path, int | None, str]:
        return self.path, None, self.case.name


def report_case(result: CaseResult) -> None:
    """Turn a :class:`~placement_wsgi.testing.loader.CaseResult` into pytest's outcome."""
    from placement_wsgi.testing.loader import Outcome

    if result.outcome in (Outcome.FAILED, Outcome.UNEXPECTED_SUCCESS):
        pytest.fail(result.detail, pytrace=False)
    if result.outcome is Outcome.SKIPPED:
        pytest.skip(result.detail)
    if result.outcome is Outcome.EXPECTED_FAILURE:
        pytest.xfail(result.detail)


@pytest.fixture(scope="module", autouse=True)
def _placement_gabbi_fixtures_stop() -> Iterator[None]:
    """Stop the fixtures of the last YAML file a module ran through ``gabbi_cases``."""
    yield
    # Only if something loaded YAML: importing the loader needs gabbi.
    loader = sys.modules.get("placement_wsgi.testing.loader")
    if loader is not None:
        loader.RUNNER.leave()


@pytest.fixture
def placement() -> Iterator[PlacementClient]:
    """A PlacementClient on an in-process app with a fresh throwaway database."""
    from placement_wsgi.direct import PlacementDirect
    from placement_wsgi.testing.config import make_conf
    from placement_wsgi.testing.databases import THROWAWAY

    with PlacementDirect(make_conf(THROWAWAY.fresh_url()), latest_microversion=True) as client:
        yield client

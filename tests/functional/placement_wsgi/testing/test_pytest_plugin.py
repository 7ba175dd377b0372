"""The pytest plugin ``placement_wsgi``, as a project outside this repository uses it.

``--placement-gabbits DIR`` runs the YAML (one item per test, a file's
fixtures around its tests) and the ``placement`` fixture gives a client of
a fresh service.
"""

from __future__ import annotations

import pathlib
import sys

from tests.fixtures.databases import server_of
from tests.fixtures.gabbi_project import CLIENT_TEST, PROVIDERS_YAML, run, write_project


def test_the_plugin_alone_runs_the_yaml_and_gives_a_client(
        tmp_path: pathlib.Path, engine: str) -> None:
    root = write_project(tmp_path, {"test_client.py": CLIENT_TEST})
    done = run(root, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--placement-gabbits", "gabbits", server=server_of(engine))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout


def test_the_plugin_reports_a_failing_expectation(tmp_path: pathlib.Path) -> None:
    root = write_project(tmp_path, {"gabbits/providers.yaml": PROVIDERS_YAML.replace(
        "$.name: ss", "$.name: not-ss")})
    done = run(root, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--placement-gabbits", "gabbits")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout
    assert "not-ss" in done.stdout

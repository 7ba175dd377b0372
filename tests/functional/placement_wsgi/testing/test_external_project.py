"""A project outside this repository runs its gabbi YAML with placement_wsgi.testing only.

Each test writes a throwaway project (tests/fixtures/gabbi_project.py) and
runs it in a fresh Python process, as its owner would: through a conftest
of the public package and through unittest's ``load_tests``. The pytest
plugin and ``placement-gabbi-run`` are tested beside their modules
(test_pytest_plugin.py, test_run.py).
"""

from __future__ import annotations

import pathlib
import sys

from tests.fixtures.gabbi_project import run, write_project


def test_a_conftest_of_the_public_package_runs_the_yaml(tmp_path: pathlib.Path) -> None:
    root = write_project(tmp_path, {"conftest.py": """\
        import pathlib

        from placement_wsgi.testing import gabbits

        pytest_collect_file = gabbits.collect_gabbits(pathlib.Path(__file__).parent / "gabbits")
        """})
    # The plugin is switched off: the conftest alone must do.
    done = run(root, sys.executable, "-m", "pytest", "-q", "-p", "no:placement_wsgi",
               "-p", "no:cacheprovider", "-rA")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
    assert "PASSED gabbits/providers.yaml::cn1 has two NUMA nodes" in done.stdout


def test_unittest_load_tests_runs_the_yaml(tmp_path: pathlib.Path) -> None:
    root = write_project(tmp_path, {"test_api.py": """\
        import pathlib

        from placement_wsgi.testing import gabbits


        def load_tests(loader, tests, pattern):
            return gabbits.load_tests(pathlib.Path(__file__).parent / "gabbits", loader)
        """})
    done = run(root, sys.executable, "-m", "unittest", "-v", "test_api")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Ran 3 tests" in done.stderr

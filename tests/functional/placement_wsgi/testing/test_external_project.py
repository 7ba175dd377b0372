"""A project outside this repository runs its gabbi YAML with placement_wsgi.testing only.

Each test writes a throwaway project into tmp_path (a YAML directory and
the little glue docs/gabbi.md shows) and runs it in a fresh Python
process, as its owner would: through a conftest of the public package,
through the pytest plugin alone, through unittest's ``load_tests`` and
through ``placement-gabbi-run``.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from placement_wsgi.testing.databases import ENV_DATABASE_SERVER
from tests.fixtures.databases import server_of

#: Upstream-style YAML naming a public fixture and its variables.
PROVIDERS_YAML = """\
fixtures:
  - SharedStorageFixture

defaults:
  request_headers:
    x-auth-token: admin
    accept: application/json
    openstack-api-version: placement latest

tests:
- name: the sharing storage is there
  GET: /resource_providers/$ENVIRON['SS_UUID']
  response_json_paths:
    $.name: ss

- name: cn1 has two NUMA nodes
  GET: /resource_providers?in_tree=$ENVIRON['CN1_UUID']&required=!HW_CPU_X86_SSE
  response_json_paths:
    $.resource_providers.`len`: 4
"""

EMPTY_YAML = """\
fixtures:
  - APIFixture

tests:
- name: a fresh database has no providers
  GET: /resource_providers
  request_headers:
    x-auth-token: admin
  response_json_paths:
    $.resource_providers: []
"""

CLIENT_TEST = '''\
def test_placement_fixture(placement):
    created = placement.post("/resource_providers", json={"name": "mine"})
    assert created.status_code == 200, created.text
    assert [rp["name"] for rp in placement.get("/resource_providers").json()[
        "resource_providers"]] == ["mine"]
'''


def write_project(root: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for name, text in {"gabbits/providers.yaml": PROVIDERS_YAML,
                       "gabbits/empty.yaml": EMPTY_YAML, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def run(root: pathlib.Path, *command: str, server: str = "sqlite") -> subprocess.CompletedProcess:
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("PYTEST_", "NOVA_RESHAPE_TEST_"))}
    environment[ENV_DATABASE_SERVER] = server
    return subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True,
                          timeout=600)


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


@pytest.mark.parametrize("yaml, status", [(PROVIDERS_YAML, 0),
                                          (PROVIDERS_YAML.replace("`len`: 4", "`len`: 5"), 1)])
def test_placement_gabbi_run(tmp_path: pathlib.Path, yaml: str, status: int) -> None:
    root = write_project(tmp_path, {"gabbits/providers.yaml": yaml})
    command = pathlib.Path(sys.executable).with_name("placement-gabbi-run")
    done = run(root, str(command), "--", "gabbits/providers.yaml", "gabbits/empty.yaml")
    assert done.returncode == status, done.stdout + done.stderr
    assert ("There were failures" in done.stderr) == bool(status)

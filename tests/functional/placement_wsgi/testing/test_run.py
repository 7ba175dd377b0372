"""``placement-gabbi-run``: YAML files run in-process, exit status 1 on any failure."""

from __future__ import annotations

import pathlib
import sys

import pytest

from tests.fixtures.gabbi_project import PROVIDERS_YAML, run, write_project


@pytest.mark.parametrize("yaml, status", [(PROVIDERS_YAML, 0),
                                          (PROVIDERS_YAML.replace("`len`: 4", "`len`: 5"), 1)])
def test_placement_gabbi_run(tmp_path: pathlib.Path, yaml: str, status: int) -> None:
    root = write_project(tmp_path, {"gabbits/providers.yaml": yaml})
    command = pathlib.Path(sys.executable).with_name("placement-gabbi-run")
    done = run(root, str(command), "--", "gabbits/providers.yaml", "gabbits/empty.yaml")
    assert done.returncode == status, done.stdout + done.stderr
    assert ("There were failures" in done.stderr) == bool(status)

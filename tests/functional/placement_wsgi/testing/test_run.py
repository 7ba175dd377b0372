"""``placement-gabbi-run``: YAML files run in-process, exit status 1 on any failure, 2 on a
wrong input."""

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


@pytest.mark.parametrize("arguments, words", [
    (("--", "gabbits/missing.yaml"), "gabbits/missing.yaml: No such file or directory"),
    (("--", "gabbits/garbage.yaml"), "gabbits/garbage.yaml: not a YAML file"),
    (("--", "gabbits/notes.yaml"), "gabbits/notes.yaml: not gabbi tests"),
    (("--fixture-module", "no_such_fixtures", "--", "gabbits/empty.yaml"),
     "--fixture-module: cannot import no_such_fixtures"),
    (("--database-server", "postgresql+psycopg://postgres@127.0.0.1:1", "--",
      "gabbits/empty.yaml"), "cannot connect"),
])
def test_a_wrong_input_is_one_line_and_status_2_before_anything_runs(
        tmp_path: pathlib.Path, arguments: tuple[str, ...], words: str) -> None:
    root = write_project(tmp_path, {"gabbits/notes.yaml": "just: notes\n"})
    (root / "gabbits" / "garbage.yaml").write_bytes(b"\xf4\x00\xff tests:")
    command = pathlib.Path(sys.executable).with_name("placement-gabbi-run")
    done = run(root, str(command), *arguments)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("placement-gabbi-run: error: ") and words in done.stderr

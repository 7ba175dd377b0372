"""tools/reshape_example.py, the README's reshape example, really works."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
SCRIPT = os.path.join(ROOT, "tools", "reshape_example.py")
GPU = "cmp-07_pci_0000_84_00_0"

EXPECTED_AFTER = {
    "allocations": {"cmp-07": {"MEMORY_MB": 2048, "VCPU": 2}, GPU: {"VGPU": 1}},
    "inventory": {"cmp-07": {"MEMORY_MB": 65536, "VCPU": 32}, GPU: {"VGPU": 8}},
}


def _load():
    spec = importlib.util.spec_from_file_location("reshape_example", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_on_every_engine(db_url):
    result = _load().run(db_url)
    assert result["before"]["inventory"] == {
        "cmp-07": {"MEMORY_MB": 65536, "VCPU": 32, "VGPU": 8}}
    assert result["before"]["allocations"] == {
        "cmp-07": {"MEMORY_MB": 2048, "VCPU": 2, "VGPU": 1}}
    assert result["after"] == EXPECTED_AFTER


def test_example_script_on_the_sqlite_default(tmp_path):
    env = {**os.environ, "PYTHONPATH": ROOT}
    completed = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True,
                               cwd=tmp_path, env=env, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["after"] == EXPECTED_AFTER

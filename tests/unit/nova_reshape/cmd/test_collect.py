"""``nova-reshape-manage host collect`` over the fake hypervisor (tests/fixtures/hypervisor.py)."""

from __future__ import annotations

import io
import pathlib

import pytest

from nova_reshape.cmd import manage
from nova_reshape.hostfacts import collected
from tests.fixtures import hypervisor


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return manage.main(["host", "collect", *argv], out=out, err=err), out.getvalue(), \
        err.getvalue()


@pytest.fixture
def scene(tmp_path: pathlib.Path) -> tuple[str, str]:
    return hypervisor.build(tmp_path)


def test_a_directory_output_gets_host_yaml_and_a_summary_line(tmp_path, scene):
    sysfs, qemu = scene
    code, out, err = run("--output", str(tmp_path), "--host", "cmp-1",
                         "--sysfs-root", sysfs, "--libvirt-xml-dir", qemu)
    assert code == 0, err
    path = tmp_path / "cmp-1.yaml"
    assert out == f"{path}: 4 GPU(s), 4 mediated device(s), 3 held by guests\n"
    assert collected.load_collected_dir(str(tmp_path))["cmp-1"].path == str(path)
    # the domain definitions it could not use are warnings, not failures
    assert err.count("nova-reshape-manage: warning: ") == 2
    assert "broken.xml: not a domain definition" in err


def test_a_missing_sysfs_root_is_bad_input(tmp_path):
    code, out, err = run("--output", str(tmp_path / "x.yaml"),
                         "--sysfs-root", str(tmp_path / "nope"))
    assert (code, out) == (2, "")
    assert err == f"nova-reshape-manage: error: --sysfs-root {tmp_path / 'nope'}: not a directory\n"


def test_a_missing_xml_directory_is_bad_input(tmp_path, scene):
    code, _, err = run("--output", str(tmp_path / "x.yaml"), "--sysfs-root", scene[0],
                       "--libvirt-xml-dir", str(tmp_path / "none"))
    assert code == 2 and "--libvirt-xml-dir" in err


def test_an_unwritable_output_is_bad_input(tmp_path, scene):
    sysfs, qemu = scene
    target = tmp_path / "no" / "such" / "x.yaml"
    code, _, err = run("--output", str(target), "--sysfs-root", sysfs, "--libvirt-xml-dir", qemu)
    assert code == 2
    assert err.endswith(f"error: {target}: No such file or directory\n")
    assert not target.parent.exists()

"""host collect over fake sysfs trees and libvirt definitions."""

from __future__ import annotations

import io
import os
import stat

import pytest

from nova_reshape.cmd import manage
from nova_reshape.hostfacts import collect, collected
from nova_reshape.virt.host import read_yaml
from tests.fixtures import hypervisor as hv
from tests.fixtures import nova_db as fx


@pytest.fixture
def scene(tmp_path):
    return hv.build(tmp_path)


def test_sysfs_gpus_and_their_types(scene):
    sysfs, _ = scene
    gpus, mdevs, errors = collect.read_sysfs(sysfs)
    assert {gpu.address: dict(gpu.mdev_types) for gpu in gpus} == hv.GPUS
    assert {mdev.uuid: (mdev.gpu, mdev.type) for mdev in mdevs} == hv.MDEVS
    assert errors == []


def test_holders_from_definitions_with_a_malformed_file(scene):
    _, qemu = scene
    definitions, errors = collect.definitions_from_dir(qemu)
    assert errors == []
    assert len(definitions) == len(hv.DOMAINS)
    holders, errors = collect.mdev_holders(definitions)
    assert holders == {hv.MDEV_1: fx.PINNED, hv.MDEV_2: fx.PINNED,
                       hv.MDEV_STOPPED: fx.SPREAD, hv.MDEV_GONE: hv.GHOST_DOMAIN}
    (error,) = errors
    assert error.startswith(os.path.join(qemu, "broken.xml") + ": not a domain definition: ")
    assert "mismatched tag" in error


def test_collect_combines_sysfs_and_libvirt(scene):
    sysfs, qemu = scene
    result = collect.collect("cmp-1", sysfs, qemu)
    held = {mdev.uuid: mdev.instance for mdev in result.mdevs}
    assert held == {hv.MDEV_1: fx.PINNED, hv.MDEV_2: fx.PINNED, hv.MDEV_FREE: None,
                    hv.MDEV_STOPPED: fx.SPREAD}
    assert any(f"domain {hv.GHOST_DOMAIN} uses mdev {hv.MDEV_GONE}, which does not exist"
               in error for error in result.errors)
    assert any("broken.xml" in error for error in result.errors)
    assert len(result.errors) == 2


def test_no_mdev_support_is_empty_not_an_error(tmp_path):
    sysfs, qemu = hv.build(tmp_path, gpus={}, mdevs={}, domains={})
    result = collect.collect("cmp-9", sysfs, qemu)
    assert (result.gpus, result.mdevs, result.errors) == ((), (), ())


def test_virsh_is_asked_when_it_answers(tmp_path):
    xml = hv.DOMAINS["instance-00000001.xml"].replace("'", "'\\''")
    script = tmp_path / "virsh"
    script.write_text("#!/bin/sh\n"
                      'case "$3" in\n'
                      f"  list) echo {fx.PINNED}; echo ;;\n"
                      f"  dumpxml) printf '%s' '{xml}' ;;\n"
                      "  *) exit 1 ;;\n"
                      "esac\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    definitions = collect.definitions_from_virsh(str(script))
    assert [d.source for d in definitions] == [f"virsh dumpxml {fx.PINNED}"]
    holders, errors = collect.mdev_holders(definitions)
    assert holders == {hv.MDEV_1: fx.PINNED, hv.MDEV_2: fx.PINNED} and errors == []


def test_virsh_that_fails_means_files(tmp_path):
    script = tmp_path / "virsh"
    script.write_text("#!/bin/sh\necho 'error: failed to connect' >&2\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    assert collect.definitions_from_virsh(str(script)) is None
    assert collect.definitions_from_virsh(str(tmp_path / "missing")) is None


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return manage.main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


def test_command_writes_a_collected_file(scene, tmp_path):
    sysfs, qemu = scene
    target = tmp_path / "out"
    target.mkdir()
    code, out, err = run("host", "collect", "--output", str(target), "--host", "cmp-1",
                         "--sysfs-root", sysfs, "--libvirt-xml-dir", qemu)
    assert code == 0
    path = target / "cmp-1.yaml"
    assert out == f"{path}: 4 GPU(s), 4 mediated device(s), 3 held by guests\n"
    assert err.count("warning:") == 2 and "broken.xml" in err
    text = path.read_text()
    assert text.startswith("# Collected on cmp-1 by nova-reshape-manage host collect")
    loaded = collected.from_document(read_yaml(str(path)), str(path))
    assert loaded.host == "cmp-1"
    assert {gpu.address for gpu in loaded.gpus} == set(hv.GPUS)
    assert [m.instance for m in loaded.mdevs_of(hv.GPU_TWO_TYPES)] == [
        fx.PINNED, fx.PINNED, None]
    assert len(loaded.errors) == 2


def test_command_refuses_a_missing_sysfs(tmp_path):
    code, _, err = run("host", "collect", "--output", str(tmp_path / "x.yaml"),
                       "--sysfs-root", str(tmp_path / "nope"))
    assert code == 2
    assert err == f"nova-reshape-manage: error: --sysfs-root {tmp_path / 'nope'}: " \
                  "not a directory\n"

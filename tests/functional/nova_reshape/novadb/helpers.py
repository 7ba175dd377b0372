"""Run describe_hosts and load its files with the migration's own loader."""

from __future__ import annotations

import io
import os

from nova_reshape.cmd import manage
from nova_reshape.virt.host import load_hosts, read_yaml


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def load_output(directory: str) -> dict[str, dict]:
    """Every written file by host, after the migration's loader accepted them all."""
    paths = [os.path.join(directory, name) for name in sorted(os.listdir(directory))]
    load_hosts(paths)  # the real schema and cross-file checks; raises if any file is bad
    documents = {}
    for path in paths:
        document = read_yaml(path)
        documents[document["host"]] = document
    return documents


def collect(root, host: str):
    """Run ``host collect`` over the fake hypervisor (tests/fixtures/hypervisor.py) under
    ``root``; the directory holding the collected file."""
    from tests.fixtures import hypervisor

    sysfs, qemu = hypervisor.build(root)
    collected = root / "collected"
    collected.mkdir()
    code, _, err = run("host", "collect", "--output", str(collected), "--host", host,
                       "--sysfs-root", sysfs, "--libvirt-xml-dir", qemu)
    assert code == 0, err
    return collected


def header(path: str) -> list[str]:
    with open(path, encoding="utf-8") as stream:
        return [line.rstrip("\n") for line in stream if line.startswith("#")]

"""A mixed deployment (VGPU, PCI, PCPU, Cyborg, a disabled host, an ironic node) and
its reports, shared by the report's structural and browser tests."""

from __future__ import annotations

import io
import os
import shutil

import pytest
import yaml

from nova_reshape.cmd import manage
from nova_reshape.cmd.consistency_check import NOT_RUN
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape import migrate_helpers as helpers

#: Compute hosts then one ironic node; the refused host's file names a node Placement lacks.
HOSTS, IRONIC = 3, 1
REFUSED = "cmp-lost"


def main(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    # Host files only: the consistency check's one warning line (its own tests assert
    # it) would break the JSON documents these tests parse from the joined output.
    return code, out.getvalue() + err.getvalue().replace(NOT_RUN, "")


class Deployment:
    """The generated deployment: its database, placement.conf and host files."""

    def __init__(self, db_url: str, tmp_path) -> None:
        self.db_url = db_url
        self.hosts = str(tmp_path / "hosts")
        generator = helpers.generator
        with PlacementDirect(make_conf(db_url)) as placement:
            generator.generate(placement, self.hosts, hosts=HOSTS + IRONIC, gpus=2,
                               instances=6, ironic=IRONIC,
                               kinds=(*generator.KINDS, *generator.EXTRA_KINDS))
        self.conf = str(tmp_path / "placement.conf")
        generator.write_config(self.conf, db_url)
        self.nodes = [f"cmp-{index:04d}" for index in range(HOSTS + IRONIC)]
        self.ironic = {self.nodes[-1]: generator.stable_uuid(0, self.nodes[-1])}

    def command(self, *extra: str) -> list[str]:
        return ["--config-file", self.conf, "placement", "migrate_compute_inventory",
                "--host-file", self.hosts, *extra]

    def add_refused_host(self) -> str:
        """A host file whose node Placement does not know: the run is refused."""
        with open(os.path.join(self.hosts, "cmp-0001.yaml"), encoding="utf-8") as stream:
            document = yaml.safe_load(stream)
        document["host"] = REFUSED
        document["nodes"][0].update(nodename=REFUSED,
                                    uuid="00000000-0000-4000-8000-00000000dead")
        path = os.path.join(self.hosts, f"{REFUSED}.yaml")
        with open(path, "w", encoding="utf-8") as stream:
            yaml.safe_dump(document, stream)
        return path


@pytest.fixture
def deployment(db_url, tmp_path) -> Deployment:
    return Deployment(db_url, tmp_path)


@pytest.fixture(scope="session")
def artifacts() -> str:
    """.artifacts/ at the checkout's root (git-ignored): screenshots the tests keep."""
    path = os.path.join(helpers.ROOT, ".artifacts")
    os.makedirs(path, exist_ok=True)
    return path


def copy_artifact(path: str, artifacts: str, name: str) -> str:
    target = os.path.join(artifacts, name)
    shutil.copyfile(path, target)
    return target

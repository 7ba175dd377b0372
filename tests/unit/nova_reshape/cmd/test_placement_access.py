"""placement_opener: how a command reaches Placement, checked before anything is read."""

from __future__ import annotations

import pytest

from nova_reshape.cmd.placement_access import placement_opener
from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.cmd.request import PlacementAccess
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.transport.direct import DirectTransport
from tests.fixtures.config import clean_environment  # noqa: F401 (autouse)


@pytest.mark.parametrize("access, line", [
    (PlacementAccess(config_files=("p.conf",), url="http://x"),
     "give either --config-file or --placement-url, not both"),
    (PlacementAccess(config_files=("p.conf",), headers=("X-Roles: admin",)),
     "--header only applies to --placement-url"),
    (PlacementAccess(url="http://x", headers=("no colon",)),
     "--header 'no colon' is not NAME:VALUE"),
    (PlacementAccess(), "give --config-file (a placement.conf naming the database), "
     "--placement-url, or a --nova-config whose [placement_database] connection names it"),
])
def test_unusable_access_is_bad_input(access, line):
    with pytest.raises(Refusal) as refused:
        placement_opener(access)
    assert (refused.value.exit_class, refused.value.message) == (ExitClass.BAD_INPUT, line)


def test_nova_confs_placement_database_when_no_placement_conf(tmp_path, db_url):
    nova_conf = tmp_path / "nova.conf"
    nova_conf.write_text(f"[placement_database]\nconnection = {db_url}\n")
    opener = placement_opener(PlacementAccess(), NovaConfigPaths((str(nova_conf),)))
    with opener() as placement:
        assert isinstance(placement, DirectTransport) and placement.direct is not None
        assert placement.get("/resource_providers").status_code == 200


def test_a_url_opens_without_being_reached():
    opener = placement_opener(PlacementAccess(url="http://127.0.0.1:9", token="t",
                                              headers=("X-Roles: admin",)))
    with opener() as placement:
        assert placement.headers["X-Roles"] == "admin"

"""Which Placement a command reaches, and the one-line refusals of a wrong choice."""

from __future__ import annotations

import pytest

from nova_reshape.cmd import placement_access
from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.cmd.request import PlacementAccess


@pytest.mark.parametrize(("access", "message"), [
    (PlacementAccess(config_files=("p.conf",), url="http://p"), "not both"),
    (PlacementAccess(config_files=("p.conf",), headers=("X: y",)), "only applies"),
    (PlacementAccess(url="http://p", headers=("no-colon",)), "is not NAME:VALUE"),
    (PlacementAccess(), "give --config-file"),
])
def test_wrong_access_is_bad_input(access, message):
    with pytest.raises(Refusal, match=message) as raised:
        placement_access.placement_opener(access)
    assert raised.value.exit_class is ExitClass.BAD_INPUT


def test_url_opens_an_http_client_with_the_headers():
    opener = placement_access.placement_opener(
        PlacementAccess(url="http://placement:8778", token="t", headers=("X-Roles: admin",)))
    assert opener.args == ("http://placement:8778", "t", {"X-Roles": "admin"})


def test_a_missing_configuration_file_is_bad_input(tmp_path):
    with pytest.raises(Refusal) as raised:
        placement_access.placement_opener(
            PlacementAccess(config_files=(str(tmp_path / "none.conf"),)))
    assert raised.value.exit_class is ExitClass.BAD_INPUT

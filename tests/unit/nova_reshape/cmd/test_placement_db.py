"""Placement's database for the commands: configuration and its refusals."""

from __future__ import annotations

import pytest

from nova_reshape.cmd import placement_db
from nova_reshape.cmd.refusal import ExitClass, Refusal


def test_no_connection_anywhere_is_bad_input_naming_the_option(tmp_path):
    conf = tmp_path / "placement.conf"
    conf.write_text("[DEFAULT]\n")
    with pytest.raises(Refusal) as refused:
        placement_db.database_conf([str(conf)])
    assert refused.value.exit_class is ExitClass.BAD_INPUT
    assert refused.value.message == ("configuration: [placement_database] connection is not "
                                     f"set in {conf}")
    with pytest.raises(Refusal, match="not set in any configuration file"):
        placement_db.database_conf([])


def test_nova_conf_names_the_database_when_placement_conf_does_not(tmp_path):
    conf = placement_db.database_conf([], "sqlite:////nowhere/nova_api.sqlite")
    assert conf.placement_database.connection == "sqlite:////nowhere/nova_api.sqlite"


def test_a_missing_database_is_refused_and_not_created(tmp_path):
    path = tmp_path / "none.sqlite"
    conf = placement_db.database_conf([], f"sqlite:///{path}")
    with pytest.raises(Refusal) as refused:
        placement_db.check_placement_database(conf)
    assert "\n" not in refused.value.message and not path.exists()

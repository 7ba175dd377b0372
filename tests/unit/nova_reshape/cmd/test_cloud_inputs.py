"""CloudInputs: the arguments of audit and sync_aggregates, and what they name."""

from __future__ import annotations

import pytest

from nova_reshape.cmd import cloud_inputs, manage
from nova_reshape.cmd.nova_cells import NO_DATABASE
from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.cmd.request import PlacementAccess
from nova_reshape.novadb.holders import read_nodes_on
from tests.fixtures.config import clean_environment  # noqa: F401 (autouse)


def parsed(*argv, command="audit"):
    """The inputs of ``argv`` after ``--config-file a.conf placement COMMAND``."""
    args = manage.build_parser().parse_args(["--config-file", "a.conf", "placement", command,
                                             *argv])
    return cloud_inputs.CloudInputs.from_args(args)


@pytest.mark.parametrize("command", ["audit", "sync_aggregates"])
def test_every_input_in_one_record(command):
    inputs = parsed("--config-file", "b.conf", "--nova-config",
                    "nova.conf", "--nova-api-database", "sqlite:///api", "--cell", "cell1",
                    "--cell", "cell2", "--placement-url", "http://p", "--token", "t",
                    "--header", "X-Roles: admin", command=command)
    assert inputs == cloud_inputs.CloudInputs(
        placement=PlacementAccess(config_files=("a.conf", "b.conf"), url="http://p",
                                  token="t", headers=("X-Roles: admin",)),
        api_url="sqlite:///api", cells=("cell1", "cell2"), nova_configs=("nova.conf",))
    assert inputs.paths.paths == ("nova.conf",)


@pytest.mark.parametrize("read", [
    lambda inputs: cloud_inputs.read_cells(inputs, read_nodes_on),
    cloud_inputs.read_aggregates])
def test_no_api_database_named_is_bad_input(read):
    with pytest.raises(Refusal) as refused:
        read(parsed())
    assert (refused.value.exit_class, refused.value.message) == (ExitClass.BAD_INPUT,
                                                                 NO_DATABASE)


def test_an_unreadable_api_database_is_one_line(tmp_path):
    with pytest.raises(Refusal) as refused:
        cloud_inputs.read_aggregates(parsed("--nova-api-database",
                                            f"sqlite:///{tmp_path}/absent.sqlite"))
    assert refused.value.exit_class == ExitClass.BAD_INPUT
    assert "nova API database" in refused.value.message and "\n" not in refused.value.message
    assert not (tmp_path / "absent.sqlite").exists()

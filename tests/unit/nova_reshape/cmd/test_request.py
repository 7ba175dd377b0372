"""The migrate command's request: built once from the arguments, typed and frozen."""

from __future__ import annotations

import dataclasses

import pytest

from nova_reshape.cmd import manage
from nova_reshape.cmd.request import (
    HostFiles,
    MigrateRequest,
    NovaDatabase,
    OutputFormat,
    PlacementAccess,
)
from nova_reshape.virt import releases

MIGRATE = ["placement", "migrate_compute_inventory"]


def _request(*argv: str) -> MigrateRequest:
    return MigrateRequest.from_args(manage.build_parser().parse_args(list(argv)))


def test_the_defaults_name_only_the_host_files():
    request = _request(*MIGRATE, "--host-file", "a.yaml", "--host-file", "dir/")
    assert request == MigrateRequest(placement=PlacementAccess(),
                                     hosts=HostFiles(("a.yaml", "dir/")))
    assert (request.target, request.output_format, request.workers) == (
        releases.DEFAULT_TARGET, OutputFormat.TEXT, None)
    assert not request.detailed


def test_every_option_lands_in_its_field():
    request = _request(
        "--config-file", "global.conf", *MIGRATE, "--config-file", "local.conf",
        "--nova-database", "sqlite:///nova.db", "--collected", "col/",
        "--cyborg-database", "sqlite:///cyborg.db", "--nova-config", "a.conf",
        "--nova-config", "b.conf", "--target-release", "stein", "--numa-in-placement",
        "--allow-vgpu-mismatch", "--dry-run", "--format", "json", "--progress",
        "--workers", "3", "--print-nova-config")
    assert request.placement == PlacementAccess(config_files=("global.conf", "local.conf"))
    assert request.hosts == NovaDatabase("sqlite:///nova.db", "col/", "sqlite:///cyborg.db")
    assert request.nova_configs == ("a.conf", "b.conf")
    assert request.target == releases.find_release("stein")
    assert request.numa_in_placement and request.allow_vgpu_mismatch
    assert request.dry_run and request.detailed and not request.verbose
    assert request.output_format == OutputFormat.JSON and request.progress
    assert request.workers == 3 and request.print_nova_config


def test_every_cell_from_the_api_database_or_nova_conf():
    request = _request(*MIGRATE, "--nova-api-database", "mysql://db/nova_api", "--cell",
                       "cell1", "--cell", "cell2", "--skip-unreachable-cells")
    assert request.hosts == NovaDatabase(api_url="mysql://db/nova_api",
                                         cells=("cell1", "cell2"), skip_unreachable_cells=True)
    # Neither a host file nor a URL: nova.conf names the databases (read later).
    assert _request(*MIGRATE, "--nova-config", "nova.d/").hosts == NovaDatabase()


def test_one_source_of_hosts_at_most(capsys):
    with pytest.raises(SystemExit):
        _request(*MIGRATE, "--nova-database", "sqlite:///a", "--nova-api-database", "x")
    assert "not allowed with argument" in capsys.readouterr().err


def test_placement_over_http_keeps_the_headers_as_given():
    request = _request(*MIGRATE, "--host-file", "h", "--placement-url", "http://p:8778",
                       "--token", "t", "--header", "X-Roles: admin", "--header", "bad", "-v")
    assert request.placement == PlacementAccess(url="http://p:8778", token="t",
                                                headers=("X-Roles: admin", "bad"))
    assert request.verbose and request.detailed


def test_the_request_is_frozen():
    request = _request(*MIGRATE, "--host-file", "h")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.dry_run = True  # type: ignore[misc]

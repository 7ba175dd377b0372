"""Options, config files and environment variables (placement_wsgi.conf)."""

from __future__ import annotations

import os
import pathlib

import pytest
from oslo_config import cfg

from placement_wsgi import conf as placement_conf
from tests.fixtures.config import clean_environment  # noqa: F401 (autouse fixture)


def write(path: pathlib.Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def parsed(conf: cfg.ConfigOpts) -> cfg.ConfigOpts:
    conf([], project="placement", default_config_files=[], default_config_dirs=[],
         use_env=False)
    return conf


# -- register_opts -----------------------------------------------------------


def test_register_opts_gives_documented_defaults() -> None:
    conf = parsed(placement_conf.register_opts(cfg.ConfigOpts()))
    assert conf.placement_database.connection is None
    assert conf.placement_database.sync_on_startup is False
    assert conf.placement_database.sqlite_synchronous is True
    assert conf.placement_database.mysql_sql_mode == "TRADITIONAL"
    assert conf.api.auth_strategy == "keystone"
    assert conf.placement.randomize_allocation_candidates is False
    assert conf.placement.incomplete_consumer_project_id == (
        placement_conf.DEFAULT_CONSUMER_MISSING_ID)
    assert conf.placement.allocation_conflict_retry_count == 10
    assert conf.workarounds.optimize_for_wide_provider_trees is False
    # oslo.policy's and oslo.middleware's own groups
    assert conf.oslo_policy.policy_file == "policy.yaml"
    assert conf.cors.allowed_origin is None
    assert "X-Auth-Token" in conf.cors.allow_headers


def test_register_opts_on_several_conf_objects_keeps_them_apart() -> None:
    first = parsed(placement_conf.register_opts(cfg.ConfigOpts()))
    second = parsed(placement_conf.register_opts(cfg.ConfigOpts()))
    first.set_override("connection", "sqlite:///first.sqlite", "placement_database")
    first.set_override("auth_strategy", "noauth2", "api")
    second.set_override("max_allocation_candidates", 7, "placement")
    assert second.placement_database.connection is None
    assert second.api.auth_strategy == "keystone"
    assert first.placement.max_allocation_candidates == (
        placement_conf.DEFAULT_MAX_ALLOCATION_CANDIDATES)
    assert second.placement.max_allocation_candidates == 7
    assert first.placement_database.connection == "sqlite:///first.sqlite"


def test_register_opts_twice_on_one_conf_is_harmless() -> None:
    conf = cfg.ConfigOpts()
    assert placement_conf.register_opts(placement_conf.register_opts(conf)) is conf
    parsed(conf)
    assert conf.api.auth_strategy == "keystone"


def test_auth_strategy_accepts_only_known_values() -> None:
    conf = parsed(placement_conf.register_opts(cfg.ConfigOpts()))
    with pytest.raises(ValueError):
        conf.set_override("auth_strategy", "magic", "api")


# -- config files ---------------------------------------------------------------


def test_load_config_reads_files_later_ones_winning(tmp_path: pathlib.Path) -> None:
    first = write(tmp_path / "a.conf", "[placement_database]\nconnection = sqlite:///a\n"
                  "sync_on_startup = true\n[api]\nauth_strategy = noauth2\n")
    second = write(tmp_path / "b.conf", "[placement_database]\nconnection = sqlite:///b\n"
                   "[DEFAULT]\ndebug = true\n")
    conf = placement_conf.load_config(config_files=[first, second])
    assert conf.placement_database.connection == "sqlite:///b"
    assert conf.placement_database.sync_on_startup is True
    assert conf.api.auth_strategy == "noauth2"
    assert conf.debug is True  # oslo.log's option, registered by load_config


def test_load_config_with_a_missing_file_fails(tmp_path: pathlib.Path) -> None:
    with pytest.raises(cfg.ConfigFilesNotFoundError):
        placement_conf.load_config(config_files=[str(tmp_path / "nope.conf")])


def test_load_config_with_bad_value_in_file_fails_on_access(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / "bad.conf", "[placement]\nmax_allocation_candidates = many\n")
    conf = placement_conf.load_config(config_files=[path])
    with pytest.raises(cfg.ConfigFileValueError):
        _ = conf.placement.max_allocation_candidates


def test_find_config_files_prefers_the_named_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    named = write(tmp_path / "named.conf", "")
    write(tmp_path / "placement.conf", "")
    monkeypatch.setenv("OS_PLACEMENT_CONFIG_FILE", named)
    monkeypatch.setenv("OS_PLACEMENT_CONFIG_DIR", str(tmp_path))
    assert placement_conf.find_config_files() == [named]


def test_find_config_files_named_file_must_exist(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.setenv("OS_PLACEMENT_CONFIG_FILE", str(tmp_path / "missing.conf"))
    with pytest.raises(cfg.ConfigFilesNotFoundError):
        placement_conf.find_config_files()


def test_find_config_files_uses_config_dir_when_the_file_exists(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.setenv("OS_PLACEMENT_CONFIG_DIR", str(tmp_path))
    assert placement_conf.find_config_files() == []
    path = write(tmp_path / "placement.conf", "")
    assert placement_conf.find_config_files() == [path]


def test_find_config_files_falls_back_to_etc_file_when_present(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    assert placement_conf.find_config_files() == []
    etc = write(tmp_path / "etc-placement.conf", "")
    monkeypatch.setattr(placement_conf, "DEFAULT_CONFIG_FILE", etc)
    assert placement_conf.find_config_files() == [etc]


def test_find_config_files_takes_an_explicit_mapping(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / "placement.conf", "")
    assert placement_conf.find_config_files({"OS_PLACEMENT_CONFIG_DIR": str(tmp_path)}) == [path]


def test_load_config_without_files_argument_searches_config_dir(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    write(tmp_path / "placement.conf",
          "[placement_database]\nconnection = sqlite:///from-dir\n")
    monkeypatch.setenv("OS_PLACEMENT_CONFIG_DIR", str(tmp_path))
    conf = placement_conf.load_config()
    assert conf.placement_database.connection == "sqlite:///from-dir"


# -- environment variables ----------------------------------------------------------


def test_environment_sets_connection_and_auth_strategy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", "sqlite:///from-env")
    monkeypatch.setenv("OS_PLACEMENT_API__AUTH_STRATEGY", "noauth2")
    conf = placement_conf.load_config(config_files=[])
    assert conf.placement_database.connection == "sqlite:///from-env"
    assert conf.api.auth_strategy == "noauth2"


def test_environment_overrides_config_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / "p.conf", "[placement_database]\nconnection = sqlite:///file\n"
                 "sync_on_startup = false\n[api]\nauth_strategy = keystone\n")
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", "sqlite:///env")
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP", "True")
    monkeypatch.setenv("OS_PLACEMENT_API__AUTH_STRATEGY", "noauth2")
    conf = placement_conf.load_config(config_files=[path])
    assert conf.placement_database.connection == "sqlite:///env"
    assert conf.placement_database.sync_on_startup is True
    assert conf.api.auth_strategy == "noauth2"


def test_upstream_spelling_works_and_prefixed_spelling_wins(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_API__AUTH_STRATEGY", "noauth2")
    monkeypatch.setenv("OS_DEFAULT__DEBUG", "true")
    conf = placement_conf.load_config(config_files=[])
    assert conf.api.auth_strategy == "noauth2"
    assert conf.debug is True
    monkeypatch.setenv("OS_PLACEMENT_API__AUTH_STRATEGY", "keystone")
    monkeypatch.setenv("OS_PLACEMENT_DEFAULT__DEBUG", "false")
    conf = placement_conf.load_config(config_files=[])
    assert conf.api.auth_strategy == "keystone"
    assert conf.debug is False


def test_placement_group_in_both_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_PLACEMENT__MAX_ALLOCATION_CANDIDATES", "5")
    monkeypatch.setenv("OS_PLACEMENT__ALLOCATION_CANDIDATES_GENERATION_STRATEGY", "depth-first")
    conf = placement_conf.load_config(config_files=[])
    assert conf.placement.max_allocation_candidates == 5
    assert conf.placement.allocation_candidates_generation_strategy == "depth-first"
    monkeypatch.setenv("OS_PLACEMENT_PLACEMENT__MAX_ALLOCATION_CANDIDATES", "9")
    conf = placement_conf.load_config(config_files=[])
    assert conf.placement.max_allocation_candidates == 9


def test_list_options_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_PLACEMENT_CORS__ALLOWED_ORIGIN", "http://a.example,http://b.example")
    conf = placement_conf.load_config(config_files=[])
    assert conf.cors.allowed_origin == ["http://a.example", "http://b.example"]


def test_loading_does_not_modify_the_process_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_PLACEMENT_API__AUTH_STRATEGY", "noauth2")
    before = dict(os.environ)
    placement_conf.load_config(config_files=[])
    assert dict(os.environ) == before


def test_invalid_prefixed_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_PLACEMENT_API__AUTH_STRATEGY", "magic")
    with pytest.raises(cfg.ConfigSourceValueError, match="OS_PLACEMENT_API__AUTH_STRATEGY"):
        placement_conf.load_config(config_files=[])


def test_prefixed_variable_replaces_an_invalid_file_value(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / "bad.conf", "[placement]\nmax_allocation_candidates = many\n")
    monkeypatch.setenv("OS_PLACEMENT_PLACEMENT__MAX_ALLOCATION_CANDIDATES", "3")
    conf = placement_conf.load_config(config_files=[path])
    assert conf.placement.max_allocation_candidates == 3


def test_invalid_upstream_value_fails_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_PLACEMENT__MAX_ALLOCATION_CANDIDATES", "lots")
    conf = placement_conf.load_config(config_files=[])
    with pytest.raises(cfg.ConfigSourceValueError):
        _ = conf.placement.max_allocation_candidates


def test_unknown_variables_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OS_PLACEMENT_NOSUCHGROUP__X", "OS_PLACEMENT_API__NOSUCHOPTION",
                 "OS_PLACEMENT_API", "OS_PLACEMENT_DEFAULT__API", "OS_PLACEMENT___"):
        monkeypatch.setenv(name, "1")
    conf = placement_conf.load_config(config_files=[])
    assert conf.api.auth_strategy == "keystone"


def test_command_line_beats_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_PLACEMENT_DEFAULT__DEBUG", "false")
    conf = placement_conf.load_config(args=["--debug"], config_files=[])
    assert conf.debug is True


def test_each_load_is_independent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", "sqlite:///one")
    one = placement_conf.load_config(config_files=[])
    monkeypatch.setenv("OS_PLACEMENT_API__AUTH_STRATEGY", "noauth2")
    two = placement_conf.load_config(config_files=[])
    assert one.api.auth_strategy == "keystone"
    assert two.api.auth_strategy == "noauth2"


# -- documentation -------------------------------------------------------------------

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_sample_config_file_loads() -> None:
    conf = placement_conf.load_config(config_files=[str(ROOT / "etc" / "placement.conf")])
    assert conf.placement_database.connection == "sqlite:////var/lib/placement/placement.sqlite"
    assert conf.api.auth_strategy == "keystone"


@pytest.mark.parametrize("group, options", [
    ("placement_database", placement_conf.database_opts),
    ("api", placement_conf.api_opts),
    ("placement", placement_conf.placement_opts),
    ("workarounds", placement_conf.workarounds_opts),
])
def test_every_option_is_documented_with_its_default(group: str, options: list) -> None:
    text = (ROOT / "docs" / "configuration.md").read_text()
    section = text.split(f"## `[{group}]`", 1)[1].split("\n## ", 1)[0]
    for opt in options:
        rows = [line for line in section.splitlines() if line.startswith(f"| `{opt.name}` |")]
        assert len(rows) == 1, opt.name
        default = rows[0].split("|")[2].strip()
        if opt.default is None:
            assert default.startswith("*(none"), opt.name
        elif opt.default == "":
            assert default == '`""`', opt.name
        elif isinstance(opt.default, bool):
            assert default == f"`{str(opt.default).lower()}`", opt.name
        else:
            assert default == f"`{opt.default}`", opt.name

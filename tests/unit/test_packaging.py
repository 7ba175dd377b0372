"""setup.cfg ships every module and the console scripts resolve."""

from __future__ import annotations

import configparser
import importlib
import pathlib

import setuptools

ROOT = pathlib.Path(__file__).resolve().parents[2]


def setup_cfg() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return parser


def lines(value: str) -> list[str]:
    return [line.strip() for line in value.strip().splitlines() if line.strip()]


def test_every_python_directory_is_a_shipped_package() -> None:
    config = setup_cfg()
    assert config["options"]["packages"] == "find_namespace:"
    found = set(setuptools.find_namespace_packages(
        where=str(ROOT), include=lines(config["options.packages.find"]["include"]),
        exclude=lines(config["options.packages.find"]["exclude"])))
    for top in ("placement_wsgi", "nova_reshape"):
        for directory in [ROOT / top, *(ROOT / top).rglob("*")]:
            if directory.is_dir() and any(directory.glob("*.py")):
                package = ".".join(directory.relative_to(ROOT).parts)
                assert package in found, package
    assert not [name for name in found if "__pycache__" in name]
    assert "placement_wsgi.db" in found
    assert "placement_wsgi.db.migrations.versions" in found


def test_pinned_standard_names_packages() -> None:
    requires = lines(setup_cfg()["options"]["install_requires"])
    assert "os-traits==3.9.0" in requires
    assert "os-resource-classes==1.1.0" in requires


def test_test_extra_has_the_servers_and_drivers_the_suite_uses() -> None:
    extra = " ".join(lines(setup_cfg()["options.extras_require"]["test"]))
    for name in ("pytest", "gabbi", "gunicorn", "ruff", "psycopg", "PyMySQL"):
        assert name in extra, name


def test_console_scripts_point_at_callables() -> None:
    scripts = dict(
        (name.strip(), target.strip()) for name, target in (
            line.split("=", 1)
            for line in lines(setup_cfg()["options.entry_points"]["console_scripts"])))
    assert {"placement-api", "placement-manage"} <= set(scripts)
    for target in scripts.values():
        module, _, attribute = target.partition(":")
        assert callable(getattr(importlib.import_module(module), attribute)), target


def test_package_data_ships_every_report_template() -> None:
    patterns = [pattern.strip() for pattern in
                setup_cfg()["options.package_data"]["nova_reshape.runreport"].split(",")]
    templates = ROOT / "nova_reshape" / "runreport"
    files = [path for path in (templates / "templates").iterdir() if path.is_file()]
    assert files
    for path in files:
        assert any(path.relative_to(templates).match(pattern) for pattern in patterns), path
    requires = " ".join(lines(setup_cfg()["options"]["install_requires"]))
    assert "Jinja2" in requires

"""CellMapping: cell0 is known by its fixed uuid; templated URLs are filled as nova does."""

from __future__ import annotations

import pytest

from nova_reshape.nova.cell import (
    CELL0_UUID,
    CellMapping,
    CellUrlTemplateError,
    fill_url_template,
)


def test_cell0_is_known_by_its_uuid():
    cell0 = CellMapping(uuid=CELL0_UUID, name="cell0", database_connection="sqlite://")
    cell1 = CellMapping(uuid="5d1d1a1c-1f50-4b6e-a7a4-8bb3c1f4c3a1", name="cell1",
                        database_connection="mysql+pymysql://nova@db/nova",
                        transport_url="rabbit://nova@mq//")
    assert cell0.is_cell0 and not cell1.is_cell0

DEFAULT = "mysql+pymysql://nova:s3cret@DB.example.org:3307/nova_cell0?charset=utf8#frag"


@pytest.mark.parametrize("template, filled", [
    ("{scheme}://{username}:{password}@{hostname}:{port}/nova_cell1?{query}",
     "mysql+pymysql://nova:s3cret@db.example.org:3307/nova_cell1?charset=utf8"),
    ("{scheme}://{username}:{password}@{hostname}/{path}_x#{fragment}",
     "mysql+pymysql://nova:s3cret@db.example.org/nova_cell0_x#frag"),
    ("sqlite:////srv/cell1.sqlite", "sqlite:////srv/cell1.sqlite"),
])
def test_templates_are_filled_from_database_connection(template, filled):
    assert fill_url_template(template, DEFAULT) == filled


def test_absent_parts_fill_as_none_as_in_nova():
    assert fill_url_template("{scheme}://{username}:{password}@{hostname}/c1",
                             "postgresql://db/nova") == "postgresql://None:None@db/c1"


def test_several_hosts_give_indexed_placeholders():
    default = "mysql+pymysql://a:pa@h1:3306,b@[fd00::2]:3307/nova"
    assert fill_url_template(
        "{username1}:{password1}@{hostname1}:{port1} {username2}/{password2}/{hostname2}"
        "{port2}", default) == "a:pa@h1:3306 b/None/fd00::2:3307"


@pytest.mark.parametrize("template, default, message", [
    ("{scheme}://{nope}/x", DEFAULT, "unknown placeholder {nope}"),
    ("{scheme}://{hostname}/x", "mysql://db:port/x", "port that is not a number"),
    ("{scheme://x", DEFAULT, "not a valid template"),
])
def test_unfillable_templates_are_refused(template, default, message):
    with pytest.raises(CellUrlTemplateError) as raised:
        fill_url_template(template, default)
    assert message in str(raised.value)


def test_database_url_names_the_cell_and_needs_a_default():
    cell = CellMapping(uuid="5d1d1a1c-1f50-4b6e-a7a4-8bb3c1f4c3a1", name="cell1",
                       database_connection="{scheme}://{hostname}/nova_cell1")
    assert cell.database_url("mysql://db/nova") == "mysql://db/nova_cell1"
    with pytest.raises(CellUrlTemplateError) as raised:
        cell.database_url(None)
    assert str(raised.value).startswith(f"cell cell1 ({cell.uuid}): ")
    assert cell.matches("cell1") and cell.matches(cell.uuid) and not cell.matches("cell2")

"""load_connections: the database URLs a nova.conf names; unset ones are None."""

from __future__ import annotations

import pytest

from nova_reshape.nova.conf.databases import DatabaseConnections, load_connections
from nova_reshape.nova.errors import NovaConfError


def test_connections_of_later_files_win(tmp_path):
    first, second = tmp_path / "a.conf", tmp_path / "b.conf"
    first.write_text("[api_database]\nconnection = mysql://a/nova_api\n"
                     "[database]\nconnection = mysql://a/nova_cell0\n")
    second.write_text("[api_database]\nconnection = mysql://b/nova_api\n")
    assert load_connections([str(first), str(second)]) == DatabaseConnections(
        sources=(str(first), str(second)), api_database="mysql://b/nova_api",
        database="mysql://a/nova_cell0", placement_database=None)


def test_no_files_no_connections():
    assert load_connections([]) == DatabaseConnections()


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(NovaConfError) as raised:
        load_connections([str(tmp_path / "missing.conf")])
    assert "missing.conf" in str(raised.value) and "\n" not in str(raised.value)

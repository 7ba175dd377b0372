"""nova.conf files into a fresh ConfigOpts: every reader's options, no global state."""

from __future__ import annotations

import pytest

from nova_reshape.nova.conf.files import load_conf, refusing_bad_values
from nova_reshape.nova.errors import NovaConfError


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_every_group_is_registered_and_each_load_is_its_own(tmp_path):
    first = load_conf([_write(tmp_path, "a.conf", (
        "[api_database]\nconnection = mysql+pymysql://nova@db/nova_api\n"
        "[database]\nconnection = mysql+pymysql://nova@db/nova\n"
        "[filter_scheduler]\nhost_subset_size = 3\n"))])
    second = load_conf([_write(tmp_path, "b.conf", "[DEFAULT]\n")])
    assert first.api_database.connection == "mysql+pymysql://nova@db/nova_api"
    assert first.database.connection == "mysql+pymysql://nova@db/nova"
    assert first.placement_database.connection is None
    assert first.filter_scheduler.host_subset_size == 3
    assert second.filter_scheduler.host_subset_size == 1
    assert second.pci.report_in_placement is False and second.scheduler.max_attempts == 3


def test_a_bad_value_is_refused_when_read(tmp_path):
    conf = load_conf([_write(tmp_path, "c.conf", "[filter_scheduler]\nhost_subset_size = 0\n")])
    with pytest.raises(NovaConfError, match="host_subset_size") as error:
        with refusing_bad_values():
            conf.filter_scheduler.host_subset_size  # noqa: B018 (the read converts)
    assert "\n" not in str(error.value)


def test_unreadable_file(tmp_path):
    with pytest.raises(NovaConfError, match="cannot read"):
        load_conf([str(tmp_path / "absent.conf")])

"""describe_host over the nova cell fixture: one document per service host, facts' sources."""

from __future__ import annotations

import pytest

from nova_reshape.hostfacts import collected as collected_mod
from nova_reshape.hostfacts import describe
from nova_reshape.hostfacts.describe import NOVA_DB
from nova_reshape.novadb import reader
from tests.fixtures import nova_db as fx
from tests.functional.nova_reshape.novadb.helpers import collect


@pytest.fixture
def snapshot(nova_db_url):
    return reader.read_cell(nova_db_url, [])


def test_a_host_is_one_document_of_its_nodes_with_the_source_of_each_fact(snapshot):
    description = describe.describe_host(snapshot, fx.CMP1)
    assert description.host == fx.CMP1 and description.notes == []
    document = description.document
    assert (document["version"], document["host"]) == (1, fx.CMP1)
    assert [node["nodename"] for node in document["nodes"]] == [fx.CMP1_NODE]
    sources = description.sources[fx.CMP1_NODE]
    assert sources["numa_cells"] == [NOVA_DB]
    assert sources[f"consumer {fx.PINNED}"] == [NOVA_DB]
    assert "_sources" not in document["nodes"][0]


def test_what_nova_lacks_is_said_in_a_note(snapshot):
    notes = describe.describe_host(snapshot, fx.CMP2).notes
    assert len(notes) == 1 and notes[0].startswith(f"{fx.CMP2_NODE}: nova recorded no separate "
                                                  "dedicated CPUs")


def test_collected_devices_are_not_merged_into_a_host_without_one_libvirt_node(
        snapshot, tmp_path):
    found = collected_mod.load_collected_dir(str(collect(tmp_path, fx.IRONIC_HOST)))
    description = describe.describe_host(snapshot, fx.IRONIC_HOST, found[fx.IRONIC_HOST])
    assert description.notes == [f"collected devices of {fx.IRONIC_HOST} not merged: the host "
                                 "has 0 non-ironic nodes, not one"]


def test_hosts_nova_does_not_know(snapshot, tmp_path):
    known = snapshot.hosts()
    assert describe.unknown_hosts([fx.CMP1, "cmp-9", "cmp-0"], known) == ["cmp-0", "cmp-9"]
    found = collected_mod.load_collected_dir(str(collect(tmp_path, "cmp-9")))
    assert describe.collected_without_nova(found, known) == ["cmp-9"]

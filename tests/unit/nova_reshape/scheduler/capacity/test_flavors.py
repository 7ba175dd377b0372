"""Which flavors a capacity check answers for: files, names, in-use."""

from __future__ import annotations

import pytest

from nova_reshape.nova.cell import CellMapping
from nova_reshape.nova.flavor import Flavor, FlavorInfo
from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.novadb.cells import CellRead, CellsSnapshot
from nova_reshape.novadb.records import CellSnapshot
from nova_reshape.scheduler.capacity import flavors

CATALOGUE = [Flavor("m1.small", 1, 2048, flavorid="2"),
             Flavor("p1", 4, 8192, flavorid="p-1", extra_specs={"hw:cpu_policy": "dedicated"})]


def test_file_with_defaults_and_extra_specs(tmp_path):
    path = tmp_path / "flavors.yaml"
    path.write_text("flavors:\n- {name: g1, vcpus: 2, memory_mb: 1024, root_gb: 10,\n"
                    "   extra_specs: {'resources:VGPU': 1}}\n- {name: t, vcpus: 1, "
                    "memory_mb: 64}\n")
    got = flavors.load_file(str(path))
    assert got == [Flavor("g1", 2, 1024, 10, flavorid="g1", extra_specs={"resources:VGPU": "1"}),
                   Flavor("t", 1, 64, 0, flavorid="t")]


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "needs a list under 'flavors'"),
    ("flavors: [{vcpus: 1, memory_mb: 1}]", "flavor 1: needs a name"),
    ("flavors: [{name: a, vcpus: 0, memory_mb: 1}]", r"\(a\): vcpus must be an integer >= 1"),
    ("flavors: [{name: a, vcpus: 1, memory_mb: 1, ram: 2}]", "unknown key\\(s\\) ram"),
    ("flavors: [{name: a, vcpus: 1, memory_mb: 1}, {name: a, vcpus: 1, memory_mb: 1}]",
     "named twice: a"),
    ("flavors: [{name: a, vcpus: 1, memory_mb: 1, extra_specs: [1]}]",
     "extra_specs must be a mapping"),
    ("flavors: {", "not YAML or JSON"),
])
def test_file_mistakes_are_one_line(tmp_path, text, message):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(flavors.FlavorError, match=message) as raised:
        flavors.load_file(str(path))
    assert "\n" not in str(raised.value)


def test_missing_file():
    with pytest.raises(flavors.FlavorError, match="cannot read it"):
        flavors.load_file("/nonexistent/flavors.yaml")


def test_named_by_name_then_id_and_unknown():
    assert flavors.named(CATALOGUE, ["p-1", "m1.small"], "x") == [CATALOGUE[1], CATALOGUE[0]]
    with pytest.raises(flavors.FlavorError, match="--flavor m9: no such flavor in the file"):
        flavors.named(CATALOGUE, ["m9"], "the file")


def instance(uuid: str, carried: Flavor) -> InstanceRecord:
    return InstanceRecord(uuid=uuid, host="h", node="n", flavor=FlavorInfo(cur=carried))


def test_in_use_prefers_the_api_definition_else_the_instance_copy():
    gone = Flavor("old.one", 2, 512, flavorid="gone")
    cell = CellSnapshot(compute_nodes=(), services={}, pci_devices=(), migrations=(),
                        instances=(instance("i1", Flavor("m1.small", 1, 1, flavorid="2")),
                                   instance("i2", gone), instance("i3", CATALOGUE[1]),
                                   InstanceRecord(uuid="i4", host=None, node=None)))
    cells = CellsSnapshot((CellRead(CellMapping(uuid="", name=None, database_connection=""),
                                    "", cell),))
    assert flavors.in_use(cells, CATALOGUE) == [CATALOGUE[0], gone, CATALOGUE[1]]
    assert flavors.together([CATALOGUE[0]], CATALOGUE) == CATALOGUE

"""What a capacity check reads of nova: nova.conf, the API database and every cell."""

from __future__ import annotations

import pytest

from nova_reshape.nova.errors import NovaConfError
from nova_reshape.scheduler.capacity.flavors import FlavorError
from nova_reshape.scheduler.capacity.inputs import NovaInputs, choose_flavors, read_nova
from nova_reshape.scheduler.live.explain import PlacementHostStates
from nova_reshape.scheduler.live.nova_hosts import NovaDatabaseHostStates
from tests.fixtures import nova_api_db
from tests.fixtures.databases import enabled_engines

IN_USE = ["m1.large", "m1.small", "numa2", "p2", "p4"]


@pytest.fixture(scope="module", params=enabled_engines())
def cloud(request):
    with nova_api_db.nova_cloud(request.param) as found:
        yield found


def names(flavors):
    return [flavor.name for flavor in flavors]


def test_every_cell_and_the_api_database_from_nova_conf(cloud, tmp_path):
    conf = cloud.nova_conf(tmp_path / "nova.conf", filter_scheduler="host_subset_size = 3",
                           DEFAULT="cpu_allocation_ratio = 2.0")
    inputs = read_nova([conf])
    assert [read.cell.name for read in inputs.cells.cells] == ["cell1", "cell2"]
    assert names(inputs.catalogue) == ["m1.small", "p1.dedicated"]
    assert inputs.conf.filter_scheduler.host_subset_size == 3
    assert inputs.nova_conf.cpu_allocation_ratio == 2.0
    assert [a.name for a in inputs.aggregates] == ["az1", "fast", "empty"]
    assert inputs.owner_nova_now() is False  # the fixture's computes are at version 66
    assert isinstance(inputs.source(), NovaDatabaseHostStates)


def test_flavors_in_use_public_and_named(cloud, tmp_path):
    inputs = read_nova([cloud.nova_conf(tmp_path / "nova.conf")], api_url=cloud.api_url)
    used = choose_flavors(inputs)
    assert names(used) == IN_USE
    # the API database's m1.small (1 vCPU) wins over the instances' copies (2 vCPUs)
    assert next(f for f in used if f.name == "m1.small").vcpus == 1
    assert names(choose_flavors(inputs, all_flavors=True)) == IN_USE + ["p1.dedicated"]
    assert names(choose_flavors(inputs, ["dedicated-1"])) == ["p1.dedicated"]
    with pytest.raises(FlavorError, match="--flavor m9: no such flavor in nova's API"):
        choose_flavors(inputs, ["m9"])


def test_one_cell_alone_gives_the_flavors_its_instances_carry(cloud):
    inputs = read_nova(cell_url=cloud.cells["cell1"])
    assert inputs.catalogue == () and names(choose_flavors(inputs)) == IN_USE
    assert next(f for f in choose_flavors(inputs) if f.name == "m1.small").vcpus == 2


def test_nothing_of_nova_needs_a_flavors_file(tmp_path):
    inputs = read_nova()
    assert isinstance(inputs.source(), PlacementHostStates) and inputs.owner_nova_now() is None
    with pytest.raises(FlavorError, match="no flavors to check"):
        choose_flavors(NovaInputs())
    path = tmp_path / "f.json"
    path.write_text('{"flavors": [{"name": "x", "vcpus": 1, "memory_mb": 8}]}')
    assert names(choose_flavors(inputs, flavors_file=str(path))) == ["x"]
    with pytest.raises(NovaConfError):
        read_nova([str(tmp_path / "missing.conf")])

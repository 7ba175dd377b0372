"""describe_hosts --collected: mediated devices found by host collect, merged per host."""

from __future__ import annotations

import pytest

from tests.fixtures import hypervisor as hv
from tests.fixtures import nova_db as fx
from tests.functional.nova_reshape.novadb.helpers import collect, header, load_output, run


@pytest.fixture(scope="module")
def merged(nova_db_url, tmp_path_factory):
    root = tmp_path_factory.mktemp("hypervisor")
    collected_dir = collect(root, fx.CMP1)
    output = root / "hosts"
    code, _, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                       "--collected", str(collected_dir), "--output", str(output))
    assert code == 0, err
    return {"docs": load_output(str(output)), "err": err, "path": str(output / "cmp-1.yaml")}


def test_gpu_capacity_is_mdevs_in_use_plus_available(merged):
    (node,) = merged["docs"][fx.CMP1]["nodes"]
    assert node["gpus"] == [
        # three nvidia-35 mdevs exist, six more can be made
        {"address": hv.GPU_TWO_TYPES, "mdev_types": ["nvidia-35"], "capacity": 9},
        {"address": hv.GPU_STOPPED, "mdev_types": ["nvidia-36"], "capacity": 3},
        {"address": hv.GPU_IDLE_ONE_TYPE, "mdev_types": ["nvidia-35"], "capacity": 4},
    ]


def test_gpu_without_mdev_and_two_types_is_left_out_with_a_note(merged):
    notes = header(merged["path"])
    assert any(f"GPU {hv.GPU_IDLE_TWO_TYPES} has no mediated device and supports "
               "nvidia-35, nvidia-36" in line for line in notes)


def test_guests_get_their_mdevs(merged):
    (node,) = merged["docs"][fx.CMP1]["nodes"]
    consumers = {consumer["uuid"]: consumer for consumer in node["consumers"]}
    assert consumers[fx.PINNED]["mdevs"] == [{"uuid": hv.MDEV_1, "gpu": hv.GPU_TWO_TYPES},
                                             {"uuid": hv.MDEV_2, "gpu": hv.GPU_TWO_TYPES}]
    # a stopped guest still holds its mdev
    assert consumers[fx.SPREAD]["mdevs"] == [{"uuid": hv.MDEV_STOPPED, "gpu": hv.GPU_STOPPED}]
    assert "mdevs" not in consumers[fx.UNPINNED_VF]


def test_collect_errors_and_unknown_domains_become_notes(merged):
    notes = "\n".join(header(merged["path"]))
    assert "host collect: " in notes and "broken.xml" in notes
    assert f"domain {hv.GHOST_DOMAIN} uses mdev {hv.MDEV_GONE}" in notes


def test_other_hosts_are_not_touched(merged):
    assert "gpus" not in merged["docs"][fx.CMP2]["nodes"][0]

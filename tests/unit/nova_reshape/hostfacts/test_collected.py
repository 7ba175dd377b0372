"""The collected file of a host: its document, validation and loading (hostfacts/collected.py)."""

from __future__ import annotations

import dataclasses

import pytest

from nova_reshape.hostfacts import collected
from nova_reshape.hostfacts.collected import CollectedGpu, CollectedHost, CollectedMdev

GPU = "0000:84:00.0"
MDEV = "5a3a0a58-0000-4000-8000-000000000001"
INSTANCE = "10000000-0000-4000-8000-000000000001"
HOST = CollectedHost(
    host="cmp-1", gpus=(CollectedGpu(GPU, {"nvidia-35": 2, "nvidia-11": 0}),),
    mdevs=(CollectedMdev(MDEV, GPU, "nvidia-35", INSTANCE),
           CollectedMdev(MDEV.replace("1", "2"), "0000:85:00.0")),
    errors=("virsh: permission denied",))


def test_collected_file_errors_are_located(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("kind: collected\nhost: h\nmdevs: [{uuid: nope, gpu: '0000:84:00.0'}]\n")
    with pytest.raises(collected.HostDescriptionError, match=r"bad.yaml: mdevs\[0\].uuid: "):
        collected.load_collected_dir(str(tmp_path))


def test_a_collected_host_survives_its_own_file(tmp_path):
    path = tmp_path / "cmp-1.yaml"
    path.write_text(collected.dump(HOST))
    (loaded,) = collected.load_collected_dir(str(tmp_path)).values()
    assert loaded == dataclasses.replace(HOST, path=str(path))
    assert collected.to_document(HOST)["gpus"][0]["mdev_types"] == {
        "nvidia-11": 0, "nvidia-35": 2}  # sorted by type
    assert loaded.mdevs_of(GPU) == [HOST.mdevs[0]]


def test_addresses_and_uuids_are_made_canonical():
    document = {"kind": "collected", "host": "h", "gpus": [{"address": "0000:AF:00.0"}],
                "mdevs": [{"uuid": MDEV.upper(), "gpu": "0000:AF:00.0",
                           "instance": INSTANCE.upper()}]}
    host = collected.from_document(document, "h.yaml")
    assert host.gpus[0].address == "0000:af:00.0"
    assert (host.mdevs[0].uuid, host.mdevs[0].instance) == (MDEV, INSTANCE)


def test_an_empty_file_and_a_host_collected_twice_are_refused(tmp_path):
    with pytest.raises(collected.HostDescriptionError, match="the file is empty"):
        collected.from_document(None, "empty.yaml")
    (tmp_path / "a.yaml").write_text(collected.dump(HOST))
    (tmp_path / "b.yml").write_text(collected.dump(HOST))
    (tmp_path / "notes.txt").write_text("ignored")
    with pytest.raises(collected.HostDescriptionError, match="host cmp-1 is also collected in"):
        collected.load_collected_dir(str(tmp_path))


def test_a_missing_directory_is_a_located_error(tmp_path):
    with pytest.raises(collected.HostDescriptionError, match="nope"):
        collected.load_collected_dir(str(tmp_path / "nope"))

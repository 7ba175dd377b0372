"""Which reshapes each nova release's compute performs (virt/releases.py)."""

from __future__ import annotations

import pickle

import pytest

from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.virt.releases import (
    DEFAULT_TARGET,
    DriverOptions,
    Reshape,
    find_release,
    performed,
)


@pytest.mark.parametrize("text", ["26", "nova 26", "Nova26", "zed", "Zed "])
def test_a_release_by_number_series_or_name(text):
    release = find_release(text)
    assert (release.number, release.series, release.name) == (26, "zed", "Zed")
    assert str(release) == "nova 26 (zed Zed)"
    assert find_release("2023.1").name == "Antelope"


def test_an_unknown_release_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown release 'rocky'; known: 19/stein, .*34/2026.2"):
        find_release("rocky")


def test_reshapes_grow_with_the_release():
    assert performed(find_release("stein")) == {Reshape.VGPU}
    assert performed(find_release("ussuri")) == {Reshape.VGPU, Reshape.PCPU, Reshape.CYBORG}
    assert performed(find_release("yoga")) == performed(find_release("ussuri"))
    assert Reshape.PCI in performed(find_release("zed"))


def test_numa_only_when_asked_for():
    assert Reshape.NUMA not in performed(DEFAULT_TARGET)
    assert Reshape.NUMA in performed(find_release("stein"), numa_in_placement=True)
    assert DriverOptions().target == DEFAULT_TARGET == find_release("34")
    assert DriverOptions(numa_in_placement=True).reshapes == set(Reshape)


def test_a_node_of_a_host_with_its_own_nova_conf_gets_that_one():
    common, own = NovaConf(reserved_host_memory_mb=1), NovaConf(reserved_host_memory_mb=2)
    options = DriverOptions(nova_conf=common, node_confs={"cmp-7.example.org": own})
    assert options.conf_for("cmp-7.example.org") is own
    assert options.conf_for("cmp-1.example.org") is common
    assert DriverOptions().conf_for("cmp-1.example.org") is None
    assert pickle.loads(pickle.dumps(options)) == options  # handed to the workers

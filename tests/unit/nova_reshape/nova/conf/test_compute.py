"""nova.conf.compute: the nova.conf options the migration reads, with nova's defaults."""

from __future__ import annotations

import pytest

from nova_reshape.nova.conf.compute import NovaConf, load_nova_conf
from nova_reshape.nova.conf.device_spec import parse_device_spec
from nova_reshape.nova.errors import NovaConfError

NOVA_CONF = """
[DEFAULT]
cpu_allocation_ratio = 8.0
reserved_host_cpus = 2
[compute]
cpu_shared_set = 0-3,^2
cpu_dedicated_set = 8-11
[pci]
report_in_placement = true
device_spec = {"vendor_id": "10de", "product_id": "20b5", "resource_class": "a100", "traits": "x,y"}
device_spec = [{"address": "0000:3b:00.*", "physical_network": "physnet1"},
  {"address": {"bus": "8[12]"}}]
[devices]
enabled_mdev_types = nvidia-35, nvidia-36
"""


def _write(tmp_path, text, name="nova.conf"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_values_and_defaults(tmp_path):
    conf = load_nova_conf([_write(tmp_path, NOVA_CONF)])
    assert conf.report_in_placement is True
    assert conf.cpu_shared_set == {0, 1, 3} and conf.cpu_dedicated_set == {8, 9, 10, 11}
    assert conf.enabled_mdev_types == ("nvidia-35", "nvidia-36")
    assert (conf.cpu_allocation_ratio, conf.ram_allocation_ratio) == (8.0, None)
    assert (conf.initial_cpu_allocation_ratio, conf.reserved_host_memory_mb,
            conf.reserved_host_cpus, conf.reserved_host_disk_mb) == (4.0, 512, 2, 0)
    assert len(conf.device_spec) == 3


def test_empty_file_gives_nova_defaults(tmp_path):
    conf = load_nova_conf([_write(tmp_path, "[DEFAULT]\n")])
    assert conf == NovaConf(sources=conf.sources)


def test_later_files_win_and_vcpu_pin_set_wins_over_shared_set(tmp_path):
    first = _write(tmp_path, "[compute]\ncpu_shared_set = 0-3\n", "a.conf")
    second = _write(tmp_path, "[compute]\ncpu_shared_set = 4-5\n[pci]\n"
                    "passthrough_whitelist = {\"vendor_id\": \"8086\"}\n", "b.conf")
    conf = load_nova_conf([first, second])
    assert conf.cpu_shared_set == {4, 5}
    assert conf.device_spec[0].vendor_id == "8086"  # the deprecated name still counts
    legacy = _write(tmp_path, "[DEFAULT]\nvcpu_pin_set = 6-7\n", "c.conf")
    assert load_nova_conf([first, legacy]).cpu_shared_set == {6, 7}


def test_device_spec_matching(tmp_path):
    conf = load_nova_conf([_write(tmp_path, NOVA_CONF)])
    gpu = conf.spec_for("0000:d8:00.0", "10de", "20b5")
    assert (gpu.resource_class, gpu.traits) == ("a100", ("x", "y"))
    assert conf.spec_for("0000:3b:00.2", "8086", "154c").physical_network == "physnet1"
    assert conf.spec_for("0000:82:00.0", "1234", "5678").address_regex == {"bus": "8[12]"}
    assert conf.spec_for("0000:99:00.0", "1234", "5678") is None
    [short] = parse_device_spec('{"address": ":0a:00.", "vendor_id": "*"}')
    assert short.matches("0001:0a:00.7", "abcd", "0001")
    assert not short.matches("0001:0b:00.7", "abcd", "0001")


@pytest.mark.parametrize("text,message", [
    ("[pci]\nreport_in_placement = maybe\n", "report_in_placement"),
    ("[pci]\ndevice_spec = {not json\n", "[pci] device_spec"),
    ("[pci]\ndevice_spec = {\"vendor_id\": \"xyz1\"}\n", "vendor_id 'xyz1' is not a hex id"),
    ("[compute]\ncpu_dedicated_set = 3-1\n", "[compute] cpu_dedicated_set"),
    ("not ini at all\n", "nova.conf"),
])
def test_bad_values_are_one_line_errors(tmp_path, text, message):
    with pytest.raises(NovaConfError) as error:
        load_nova_conf([_write(tmp_path, text)])
    assert message in str(error.value) and "\n" not in str(error.value)


def test_missing_file(tmp_path):
    with pytest.raises(NovaConfError, match="cannot read"):
        load_nova_conf([str(tmp_path / "absent.conf")])

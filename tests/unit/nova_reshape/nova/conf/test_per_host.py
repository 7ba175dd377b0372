"""--nova-config per host group: files for every host, directories with <host>.conf."""

from __future__ import annotations

from nova_reshape.nova.conf.per_host import NovaConfigPaths, load_host_confs


def layout(tmp_path):
    common = tmp_path / "nova.conf"
    common.write_text("[DEFAULT]\nreserved_host_memory_mb = 1024\n")
    directory = tmp_path / "hosts"
    directory.mkdir()
    (directory / "nova.conf").write_text("[pci]\nreport_in_placement = True\n")
    (directory / "cmp-7.conf").write_text("[DEFAULT]\nreserved_host_memory_mb = 2048\n"
                                          "[compute]\ncpu_dedicated_set = 4-7\n")
    (directory / "README").write_text("ignored")
    return NovaConfigPaths((str(common), str(directory)))


def test_files_per_host_in_argument_order(tmp_path):
    paths = layout(tmp_path)
    assert paths.common() == [str(tmp_path / "nova.conf"), str(tmp_path / "hosts/nova.conf")]
    assert paths.for_host("cmp-7") == [*paths.common(), str(tmp_path / "hosts/cmp-7.conf")]
    assert paths.for_host("cmp-1") == paths.common()
    assert paths.overridden_hosts() == {"cmp-7"}


def test_a_host_file_overrides_the_shared_ones(tmp_path):
    confs = load_host_confs(layout(tmp_path), ["cmp-1", "cmp-7"])
    assert set(confs.by_host) == {"cmp-7"}
    assert confs.for_host("cmp-1").reserved_host_memory_mb == 1024
    assert confs.for_host("cmp-1").report_in_placement
    assert confs.for_host("cmp-7").reserved_host_memory_mb == 2048
    assert confs.for_host("cmp-7").cpu_dedicated_set == frozenset({4, 5, 6, 7})
    assert confs.for_host("cmp-7").report_in_placement


def test_nothing_given_nothing_read():
    confs = load_host_confs(NovaConfigPaths(), ["cmp-1"])
    assert confs.for_host("cmp-1") is None and not NovaConfigPaths()

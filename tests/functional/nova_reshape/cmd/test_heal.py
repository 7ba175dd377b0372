"""``placement heal_allocations`` on a damaged cloud, on every enabled engine.

tests/fixtures/heal_cloud.py builds the cloud: cell1 complete, cell2 with
instances missing allocations (plain, pinned, volume-backed), a consumer
with another project and user, an instance nova says moved, a busy and a
deleted one. Each test runs the command as an operator would and asserts
Placement's rows afterwards and the exit status nova 34 gives.
"""

from __future__ import annotations

import io
import os
import signal

import pytest

from nova_reshape.cmd import manage
from nova_reshape.consistency import heal as healing
from nova_reshape.journal import RunStatus, list_runs
from placement_wsgi.db.database import Database
from tests.fixtures import heal_cloud as hc
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures.consistency import served
from tests.fixtures.databases import checksum

C3, C4 = hc.CMP3_UUID, hc.CMP4_UUID


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(["placement", "heal_allocations", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def rows_digest(url):
    database = Database(url)
    try:
        return checksum(database)
    finally:
        database.dispose()


@pytest.fixture
def cloud(engine):
    with api_fx.nova_cloud(engine, cell2_rows=hc.cell2_rows()) as cloud:
        yield cloud


def inputs(cloud, tmp_path, conf):
    return ["--nova-config", cloud.nova_conf(tmp_path / "nova.conf"), "--config-file", conf]


def test_heals_as_nova_and_a_second_run_has_nothing_to_do(engine, cloud, tmp_path):
    url, conf = hc.placement(engine, tmp_path / "p")
    before = hc.consumers(url)
    code, out, err = run(*inputs(cloud, tmp_path, conf), "--progress")
    assert code == 0, out + err
    assert "4/4 instances healed" in err
    after = hc.consumers(url)
    assert after[hc.PLAIN][:3] == ({C3: hc.SMALL}, "p1", "u1")
    assert after[hc.PINNED][:3] == ({C3: {"PCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 10}},
                                    "p1", "u1")
    assert after[hc.VOLUME][:3] == ({C3: {"VCPU": 2, "MEMORY_MB": 2048}}, "p1", "u1")
    assert after[hc.WRONG_OWNER][:3] == ({C3: hc.SMALL}, "p1", "u1")
    assert after[hc.MOVED] == before[hc.MOVED]  # wrong host: kept without --force
    assert after[hc.BUSY][0] == {} and after[hc.DELETED][0] == {}
    types = hc.consumer_type_ids(url)
    assert [types[uuid] for uuid in (hc.PLAIN, hc.PINNED, hc.VOLUME)] == [None] * 3
    assert "4 instance(s) healed" in out
    assert err.count("port (Neutron) resource requests are not healed offline") == 1
    digest = rows_digest(url)
    code, out, err = run(*inputs(cloud, tmp_path, conf), "--skip-port-allocations")
    assert (code, err) == (4, "") and "0 instance(s) healed" in out
    assert rows_digest(url) == digest


def test_dry_run_writes_nothing_and_exits_4(engine, cloud, tmp_path):
    url, conf = hc.placement(engine, tmp_path / "p")
    digest = rows_digest(url)
    code, out, _ = run(*inputs(cloud, tmp_path, conf), "--dry-run")
    assert code == 4
    assert rows_digest(url) == digest
    assert "dry run: 4 instance(s) would be healed, nothing written" in out
    assert (f"allocations of instance {hc.PLAIN} in cell cell2 ({api_fx.CELL2_UUID}) "
            "would be created" in out)


def test_max_count_stops_after_n_and_exits_1(engine, cloud, tmp_path):
    url, conf = hc.placement(engine, tmp_path / "p")
    code, out, err = run(*inputs(cloud, tmp_path, conf), "--max-count", "2")
    assert code == 1, out + err
    assert "2 instance(s) healed; --max-count reached: run again" in out
    healed = hc.consumers(url)
    assert healed[hc.PLAIN][0] and healed[hc.PINNED][0] and not healed[hc.VOLUME][0]
    code, _, _ = run(*inputs(cloud, tmp_path, conf), "--max-count", "2")
    assert code == 1  # VOLUME and WRONG_OWNER: nova ends on the count, more or not
    code, _, _ = run(*inputs(cloud, tmp_path, conf), "--max-count", "2")
    assert code == 4


def test_force_moves_one_instance_to_its_host(engine, cloud, tmp_path):
    url, conf = hc.placement(engine, tmp_path / "p")
    code, _, _ = run(*inputs(cloud, tmp_path, conf), "--instance", hc.MOVED)
    assert code == 4 and hc.consumers(url)[hc.MOVED][0] == {C3: hc.SMALL}
    code, out, err = run(*inputs(cloud, tmp_path, conf), "--instance", hc.MOVED, "--force")
    assert code == 0, out + err
    assert hc.consumers(url)[hc.MOVED][:3] == ({C4: hc.SMALL}, "p1", "u1")


@pytest.mark.parametrize("instance", [hc.BUSY, hc.DELETED])
def test_a_busy_or_deleted_instance_has_nothing_to_do(engine, cloud, tmp_path, instance):
    url, conf = hc.placement(engine, tmp_path / "p")
    digest = rows_digest(url)
    code, _, _ = run(*inputs(cloud, tmp_path, conf), "--instance", instance)
    assert code == 4 and rows_digest(url) == digest


def test_pinned_instance_on_a_host_without_pcpu_is_refused_with_3(engine, cloud, tmp_path):
    url, conf = hc.placement(engine, tmp_path / "p", pcpu=False)
    code, out, err = run(*inputs(cloud, tmp_path, conf))
    assert code == 3, out + err
    assert f"allocations of instance {hc.PINNED} could not be written" in err
    healed = hc.consumers(url)
    # nova's order: the older PLAIN was written, nothing after the refused PINNED.
    assert healed[hc.PLAIN][0] == {C3: hc.SMALL}
    assert healed[hc.PINNED][0] == {} and healed[hc.VOLUME][0] == {}
    assert healed[hc.WRONG_OWNER][1:3] == ("px", "ux")


def test_vgpu_flavor_stops_with_8_and_heal_nested_puts_it_on_the_gpu(engine, tmp_path):
    with api_fx.nova_cloud(engine, cell2_rows=hc.cell2_rows(vgpu=True)) as cloud:
        url, conf = hc.placement(engine, tmp_path / "p", gpu_child=True)
        digest = rows_digest(url)
        code, out, err = run(*inputs(cloud, tmp_path, conf))
        assert code == 8, out + err
        assert f"instance {hc.VGPU} asks for vGPU" in err
        assert rows_digest(url) == digest  # the vGPU instance is the oldest: nothing before
        code, out, err = run(*inputs(cloud, tmp_path, conf), "--heal-nested")
        assert code == 0, out + err
        healed = hc.consumers(url)
        assert healed[hc.VGPU][0] == {C3: {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 10},
                                      hc.GPU_UUID: {"VGPU": 1}}
        assert healed[hc.PLAIN][0] == {C3: hc.SMALL}
        code, _, _ = run(*inputs(cloud, tmp_path, conf), "--heal-nested")
        assert code == 4


def test_heal_nested_puts_a_held_pci_device_on_its_provider(engine, tmp_path):
    with api_fx.nova_cloud(engine, cell2_rows=hc.cell2_rows(pci=True)) as cloud:
        url, conf = hc.placement(engine, tmp_path / "p", pci_child=True)
        code, out, err = run(*inputs(cloud, tmp_path, conf), "--instance", hc.PCI_GUEST,
                             "--dry-run")
        assert code == 4 and hc.PCI_UUID not in out  # nova's heal knows no PCI
        code, out, err = run(*inputs(cloud, tmp_path, conf), "--heal-nested")
        assert code == 0, out + err
        assert hc.consumers(url)[hc.PCI_GUEST][0] == {C3: hc.SMALL,
                                                      hc.PCI_UUID: {hc.PCI_CLASS: 1}}


def test_cell_limits_the_run_and_cell0_has_nothing(engine, cloud, tmp_path):
    url, conf = hc.placement(engine, tmp_path / "p")
    digest = rows_digest(url)
    code, _, _ = run(*inputs(cloud, tmp_path, conf), "--cell", api_fx.CELL1_UUID)
    assert code == 4 and rows_digest(url) == digest
    code, _, _ = run(*inputs(cloud, tmp_path, conf), "--cell", api_fx.CELL0_UUID)
    assert code == 4
    code, _, _ = run(*inputs(cloud, tmp_path, conf), "--cell", api_fx.CELL2_UUID)
    assert code == 0 and hc.consumers(url)[hc.PLAIN][0]


def test_sigterm_between_batches_leaves_whole_batches_and_a_rerun_completes(
        engine, cloud, tmp_path, monkeypatch):
    url, conf = hc.placement(engine, tmp_path / "p")
    write = healing.placement_io.write_journaled

    def one_batch_then_sigterm(writes, bodies, done=None):
        return write(writes, bodies, batch=1,
                     done=lambda count, total: os.kill(os.getpid(), signal.SIGTERM))

    monkeypatch.setattr(healing.placement_io, "write_journaled", one_batch_then_sigterm)
    code, _, err = run(*inputs(cloud, tmp_path, conf), "--skip-port-allocations")
    assert code == 143 and err.count("\n") == 1 and "interrupted by SIGTERM; " in err
    healed = hc.consumers(url)
    assert healed[hc.PLAIN][0] == {C3: hc.SMALL} and healed[hc.PINNED][0] == {}
    database = Database(url)
    try:  # the journal holds the one node written, its run interrupted
        [interrupted] = list_runs(database.engine)
    finally:
        database.dispose()
    assert (interrupted.status, interrupted.changed) == (RunStatus.INTERRUPTED, 1)
    monkeypatch.undo()
    code, out, err = run(*inputs(cloud, tmp_path, conf))
    assert code == 0 and "3 instance(s) healed" in out, out + err


def test_over_http_writes_what_the_offline_run_writes(engine, tmp_path):
    with api_fx.nova_cloud(engine, cell2_rows=hc.cell2_rows(vgpu=True)) as cloud:
        nova_conf = cloud.nova_conf(tmp_path / "nova.conf")
        offline, conf = hc.placement(engine, tmp_path / "offline", gpu_child=True)
        code, out, err = run("--nova-config", nova_conf, "--config-file", conf,
                             "--heal-nested")
        assert code == 0, out + err
        online, _ = hc.placement(engine, tmp_path / "online", gpu_child=True)
        with served(online) as base_url:
            code, out, err = run("--nova-config", nova_conf, "--placement-url", base_url,
                                 "--token", "admin", "--header", "X-Roles: admin,service",
                                 "--heal-nested")
            assert code == 0, out + err
            assert run("--nova-config", nova_conf, "--placement-url", base_url,
                       "--token", "admin", "--heal-nested")[0] == 4
        assert hc.consumers(online) == hc.consumers(offline)
        assert hc.consumers(online)[hc.VGPU][0][hc.GPU_UUID] == {"VGPU": 1}

"""The scheduling check of the migration, on every enabled engine: before and after a
plan, in a transaction rolled back, equal to what the real run then measures.

The clouds have no nova database: HostStates come from Placement alone and the
flavors from the test (NovaInputs()).
"""

from __future__ import annotations

import contextlib

import pytest

from nova_reshape.compute import migrate, scheduling_check
from nova_reshape.compute.scheduling_check import CheckSetup, Verdict
from nova_reshape.nova.flavor import Flavor
from nova_reshape.novadb import cyborg
from nova_reshape.scheduler.capacity.inputs import NovaInputs
from nova_reshape.transport import open_direct
from nova_reshape.virt.host import load_hosts
from nova_reshape.virt.releases import DriverOptions
from placement_wsgi.db.database import Database
from tests.fixtures import cyborg_db as cx
from tests.fixtures import scheduling_cloud as cloud
from tests.fixtures.config import make_conf
from tests.fixtures.databases import SERVERS, checksum

G1 = Flavor("g1", 1, 512, 10, extra_specs={"resources:VGPU": "1"}, flavorid="g1")
G2 = Flavor("g2", 1, 512, 10, extra_specs={"resources:VGPU": "2"}, flavorid="g2")
HUGE = Flavor("huge", 64, 512, 10, flavorid="huge")
PLAIN = Flavor("m1", 2, 1024, 10, flavorid="m1")

NODES = [cloud.Node("gpu-even", "a0000000-0000-4000-8000-000000000001", gpus=(2, 2)),
         cloud.Node("gpu-odd", "a0000000-0000-4000-8000-000000000002", gpus=(3, 3)),
         cloud.Node("off", "a0000000-0000-4000-8000-000000000003", gpus=(2,), disabled=True)]


@pytest.fixture
def flat(engine, tmp_path):
    db_url = SERVERS.fresh_url(engine)
    cloud.write_flat(db_url, NODES)
    return db_url, load_hosts([cloud.write_host_files(tmp_path / "hosts", NODES)])


def fits(table):
    return {host.name: host.fits for host in table.hosts if host.valid}


def preview(db_url, hosts, flavors, accepted=()):
    with open_direct(make_conf(db_url)) as placement:
        check, cpu_sets = scheduling_check.preview(
            placement, hosts, DriverOptions(), CheckSetup(NovaInputs(), tuple(flavors),
                                                           frozenset(accepted)))
    return check, cpu_sets


def test_vgpu_before_and_after_the_per_pgpu_reshape(flat):
    db_url, hosts = flat
    database = Database(db_url)
    written = checksum(database)
    check, _ = preview(db_url, hosts, [G1, G2, HUGE, PLAIN])
    assert checksum(database) == written  # the preview wrote nothing
    database.dispose()
    deltas = {delta.name: delta for delta in check.deltas()}
    # one VGPU: the same hosts, the same count (multi-create over the two children)
    assert fits(check.before.by_name()["g1"]) == {"gpu-even": 4, "gpu-odd": 6}
    assert deltas["g1"].verdict == Verdict.SAME
    assert fits(check.after.by_name()["g1"]) == {"gpu-even": 4, "gpu-odd": 6}
    # two VGPU from one provider: 2+2 children give as many pairs as 4 on the root,
    # 3+3 give one pair each where 6 on the root gave three
    assert fits(check.before.by_name()["g2"]) == {"gpu-even": 2, "gpu-odd": 3}
    assert fits(check.after.by_name()["g2"]) == {"gpu-even": 2, "gpu-odd": 2}
    assert deltas["g2"].verdict == Verdict.LOSS and check.findings() == []
    # the disabled host: the same reason before and after, never counted
    off = {host.name: host for host in check.after.by_name()["g1"].hosts}["off"]
    assert not off.valid and "COMPUTE_STATUS_DISABLED" in off.reason
    # a flavor that fits nowhere before and after: no finding
    assert deltas["huge"].verdict == Verdict.NOWHERE
    assert deltas["m1"].verdict == Verdict.SAME


def test_the_dry_run_answer_is_what_the_real_run_measures(flat):
    db_url, hosts = flat
    check, cpu_sets = preview(db_url, hosts, [G1, G2, PLAIN])
    with open_direct(make_conf(db_url)) as placement:
        results = migrate.Migration(placement, hosts).run()
        assert {result.status for result in results} == {migrate.MIGRATED}
        measured = scheduling_check.measure(
            placement, CheckSetup(NovaInputs(), (G1, G2, PLAIN)), DriverOptions(), cpu_sets)
    assert measured.to_dict() == check.after.to_dict()
    check.measured = measured
    assert check.differences() == []
    # measuring the unchanged "before" would differ: the comparison can fail
    check.measured = check.before
    assert check.differences() == ["g2"]


def test_a_flavor_that_loses_every_host_is_a_finding_unless_accepted(engine, tmp_path):
    db_url = SERVERS.fresh_url(engine)
    odd = [NODES[1]]
    cloud.write_flat(db_url, odd)
    hosts = load_hosts([cloud.write_host_files(tmp_path / "hosts", odd)])
    g3 = Flavor("g3", 1, 512, 10, extra_specs={"resources:VGPU": "4"}, flavorid="g3")
    check, _ = preview(db_url, hosts, [g3, G1])
    (finding,) = check.findings()
    assert (finding.code, finding.node) == ("scheduling_lost", "flavor g3")
    assert "had 1 valid host(s) and has none" in finding.message
    # four VGPU from one provider: each child has three
    assert finding.message.endswith("gpu-odd: Placement units [group (unsuffixed)]: VGPU: 4 "
                                    "is outside min_unit 1 / max_unit 3 or not a multiple "
                                    "of step_size 1")
    accepted, _ = preview(db_url, hosts, [g3, G1], accepted=["g3"])
    assert accepted.findings() == []


def test_device_profile_flavors_keep_their_cyborg_fpgas(engine, tmp_path):
    # the profiles from Cyborg's database (tests/fixtures/cyborg_db.py): one FPGA,
    # two of one Arria 10 card; Cyborg's cards stay as they are, the roots are migrated
    nodes = [cloud.Node("fpga-one", "a0000000-0000-4000-8000-000000000011", fpgas=(2,)),
             cloud.Node("fpga-two", "a0000000-0000-4000-8000-000000000012", fpgas=(1, 1)),
             cloud.Node("plain", "a0000000-0000-4000-8000-000000000013")]
    db_url = SERVERS.fresh_url(engine)
    cloud.write_flat(db_url, nodes)
    hosts = load_hosts([cloud.write_host_files(tmp_path / "hosts", nodes)])
    flavors = [Flavor(name, 1, 512, 10, flavorid=name, extra_specs={"accel:device_profile": dp})
               for name, dp in (("fpga1", "fpga-arria10"), ("fpga2", cx.PAIR_PROFILE),
                                ("nope", "no-such-profile"))]
    with contextlib.contextmanager(cx.cyborg_database)(engine) as cyborg_url:
        inputs = NovaInputs(profiles=cyborg.read_device_profiles(cyborg_url))
    with open_direct(make_conf(db_url)) as placement:
        check, _ = scheduling_check.preview(placement, hosts, DriverOptions(),
                                            CheckSetup(inputs, tuple(flavors)))
    deltas = {delta.name: delta for delta in check.deltas()}
    for table in (check.before, check.after):
        assert fits(table.by_name()["fpga1"]) == {"fpga-one": 2, "fpga-two": 2}
        assert fits(table.by_name()["fpga2"]) == {"fpga-one": 1}
    assert deltas["fpga1"].verdict == deltas["fpga2"].verdict == Verdict.SAME
    # a profile Cyborg does not have: no host before nor after, the reason said
    assert deltas["nope"].verdict == Verdict.NOWHERE and check.findings() == []
    assert "no such profile in Cyborg's database" in check.after.by_name()["nope"].notes[0]

"""Flavors with ``accel:device_profile`` in the capacity check, on every enabled engine.

The profiles are read from a Cyborg database (tests/fixtures/cyborg_db.py:
``fpga-arria10`` asks one FPGA, ``PAIR_PROFILE`` two FPGAs of one Arria 10
card, ``BROKEN_PROFILE`` is not JSON); the cloud's FPGAs are Cyborg's child
providers of the compute nodes, whose roots report ``COMPUTE_ACCELERATORS``.
"""

from __future__ import annotations

import contextlib
import functools
import json

import pytest

from nova_reshape.accelerator.device_profile import ProfileCatalogue
from nova_reshape.nova.flavor import Flavor
from nova_reshape.novadb import cyborg
from nova_reshape.scheduler.capacity.core import CapacityCheck
from nova_reshape.scheduler.capacity.inputs import NO_CYBORG
from nova_reshape.scheduler.cmd import main
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.live.explain import PlacementHostStates
from nova_reshape.scheduler.live.placement import read_database, read_view
from tests.fixtures import cyborg_db as cx
from tests.functional.nova_reshape.scheduler.seeding import Provider, compute_node, seed

ARRIA10 = "CUSTOM_FPGA_INTEL_PAC_ARRIA10"


def fpga(host: str, address: str, total: int, traits=(ARRIA10,)) -> Provider:
    """Cyborg's provider of one FPGA card, named and owned as Cyborg does."""
    name = f"{host}_{address}"
    return Provider(name, uuid=cx.provider_uuid(name), inventories={"FPGA": total},
                    traits=("OWNER_CYBORG", *traits), owner_nova=False)


def accelerated(name: str, *cards: Provider) -> Provider:
    return compute_node(name, vcpu=16, traits=["COMPUTE_ACCELERATORS"], children=list(cards))


def flavor(name: str, profile: str) -> Flavor:
    return Flavor(name, 1, 512, 1, extra_specs={"accel:device_profile": profile},
                  flavorid=name)


ONE = flavor("fpga1", "fpga-arria10")
PAIR = flavor("fpga2", cx.PAIR_PROFILE)
MISSING = flavor("nope", "no-such-profile")
BROKEN = flavor("broken", cx.BROKEN_PROFILE)


@pytest.fixture
def fpga_cloud(engine, db_url):
    """Placement: a host with one Arria 10 card of two FPGAs, one with two cards of
    one FPGA each, one with a card of another make (four FPGAs), one without any."""
    seed(db_url, [accelerated("cmp-one", fpga("cmp-one", "0000:5e:00.0", 2)),
                  accelerated("cmp-two", fpga("cmp-two", "0000:5e:00.0", 1),
                              fpga("cmp-two", "0000:5f:00.0", 1)),
                  accelerated("cmp-other", fpga("cmp-other", "0000:5e:00.0", 4, traits=())),
                  compute_node("cmp-plain", vcpu=16)])
    with contextlib.contextmanager(cx.cyborg_database)(engine) as cyborg_url:
        yield db_url, cyborg_url


def measure(db_url, flavors, resolver):
    check = CapacityCheck(SchedulerConfig(), PlacementHostStates(), resolver=resolver)
    return read_database(db_url, lambda connection: check.run(
        flavors, functools.partial(read_view, connection))).by_name()


def fits(table):
    return {host.name: host.fits for host in table.hosts if host.valid}


def test_device_profiles_from_cyborgs_database_become_request_groups(fpga_cloud):
    db_url, cyborg_url = fpga_cloud
    before = cx.checksums(cyborg_url)
    tables = measure(db_url, [ONE, PAIR, MISSING, BROKEN],
                     cyborg.read_device_profiles(cyborg_url))
    assert cx.checksums(cyborg_url) == before  # read only
    # one FPGA of any card: every FPGA of the tree counts, one per instance
    assert fits(tables["fpga1"]) == {"cmp-one": 2, "cmp-two": 2, "cmp-other": 4}
    # two FPGAs of ONE Arria 10 card: a pair never spans two cards, the other
    # make lacks the trait
    assert fits(tables["fpga2"]) == {"cmp-one": 1}
    reasons = {host.name: host.reason for host in tables["fpga2"].hosts}
    assert "device_profile_0" in reasons["cmp-other"] and ARRIA10 in reasons["cmp-other"]
    assert "device_profile_0" in reasons["cmp-plain"] and "FPGA" in reasons["cmp-plain"]
    # a profile Cyborg does not have, or cannot read: that flavor's reason, no host
    assert (tables["nope"].hosts, tables["nope"].notes) == ([], [
        "a request filter refuses it: Device profile name no-such-profile: no such "
        "profile in Cyborg's database"])
    assert tables["broken"].hosts == [] and tables["broken"].notes == [
        f"a request filter refuses it: Device profile name {cx.BROKEN_PROFILE}: its "
        "profile_json is not JSON"]


def test_without_cyborgs_database_a_profile_flavor_has_no_host_and_says_why(fpga_cloud):
    db_url, _ = fpga_cloud
    plain = Flavor("m1", 1, 512, 1, flavorid="m1")
    tables = measure(db_url, [ONE, plain], ProfileCatalogue(absent=NO_CYBORG))
    assert tables["fpga1"].hosts == [] and "--cyborg-database" in tables["fpga1"].notes[0]
    assert len(fits(tables["m1"])) == 4


def test_the_command_reads_the_profiles_of_cyborg_database(fpga_cloud, tmp_path, capsys):
    db_url, cyborg_url = fpga_cloud
    flavors = tmp_path / "flavors.json"
    flavors.write_text(json.dumps({"flavors": [
        {"name": "fpga2", "vcpus": 1, "memory_mb": 512,
         "extra_specs": {"accel:device_profile": cx.PAIR_PROFILE}},
        {"name": "nope", "vcpus": 1, "memory_mb": 512,
         "extra_specs": {"accel:device_profile": "no-such-profile"}}]}))
    status = main(["capacity", "--placement-database", db_url, "--flavors-file", str(flavors),
                   "--cyborg-database", cyborg_url, "--format", "json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    document = {entry["name"]: entry for entry in json.loads(captured.out)["flavors"]}
    assert document["fpga2"]["total"] == 1
    assert [host["name"] for host in document["fpga2"]["hosts"] if host["valid"]] == [
        "cmp-one"]
    assert document["nope"] == {"name": "nope", "hosts": [], "total": 0}
    status = main(["capacity", "--placement-database", db_url, "--flavors-file", str(flavors),
                   "--cyborg-database", f"sqlite:///{tmp_path}/absent/cyborg.sqlite"])
    captured = capsys.readouterr()
    assert status in (2, 3) and captured.out == ""
    assert len(captured.err.splitlines()) == 1 and "cyborg" in captured.err.lower()
    assert not (tmp_path / "absent").exists()

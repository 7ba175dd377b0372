"""One flavor's capacity over a seeded Placement database, on every enabled engine."""

from __future__ import annotations

import functools
import time

from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.capacity.core import CapacityCheck, unlimited
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.live.explain import PlacementHostStates
from nova_reshape.scheduler.live.placement import read_database, read_view
from tests.functional.nova_reshape.scheduler.seeding import Provider, compute_node, seed


def gpu(name: str, total: int) -> Provider:
    return Provider(name=name, inventories={"VGPU": total})


def measure(db_url, flavors, conf=None):
    check = CapacityCheck(conf or SchedulerConfig(), PlacementHostStates())
    return read_database(db_url, lambda connection: check.run(
        flavors, functools.partial(read_view, connection))).by_name()


def rows(table):
    return {host.name: (host.valid, host.fits) for host in table.hosts}


G1 = Flavor("g1", 2, 1024, 10, extra_specs={"resources:VGPU": "1"})
G2 = Flavor("g2", 2, 1024, 10, extra_specs={"resources:VGPU": "2"})


def test_flat_and_per_pgpu_trees(db_url):
    seed(db_url, [compute_node("flat", vcpu=64, inventories={"VGPU": 6}),
                  compute_node("nested", vcpu=64, children=[gpu("nested_gpu0", 3),
                                                            gpu("nested_gpu1", 3)]),
                  compute_node("plain", vcpu=64)])
    tables = measure(db_url, [G1, G2])
    # one VGPU each: same hosts, same count in both shapes (multi-create over both children)
    assert rows(tables["g1"]) == {"flat": (True, 6), "nested": (True, 6), "plain": (False, 0)}
    # two VGPU from one provider: a pair never spans the two children
    assert rows(tables["g2"]) == {"flat": (True, 3), "nested": (True, 2), "plain": (False, 0)}
    assert tables["g2"].total == 5
    assert tables["g1"].by_uuid()[next(h.uuid for h in tables["g1"].hosts
                                       if h.name == "plain")].reason.startswith(
        "Placement missing_class [group (unsuffixed)]: no provider in the tree has VGPU")


def test_disabled_root_and_capacity_reasons(db_url):
    seed(db_url, [compute_node("small", vcpu=4, inventories={
                      "MEMORY_MB": {"total": 16384, "reserved": 12288}}),
                  compute_node("off", traits=["COMPUTE_STATUS_DISABLED"]),
                  compute_node("big", vcpu=16, memory_mb=65536)])
    table = measure(db_url, [Flavor("m4", 4, 8192, 20)])["m4"]
    assert rows(table) == {"big": (True, 4), "off": (False, 0), "small": (False, 0)}
    reasons = {host.name: host.reason for host in table.hosts}
    assert "root has forbidden trait(s) COMPUTE_STATUS_DISABLED" in reasons["off"]
    assert reasons["small"].startswith("Placement capacity") and "MEMORY_MB" in reasons["small"]


def test_every_root_answers_whatever_the_placement_limit(db_url):
    seed(db_url, [compute_node(f"cmp-{n}", vcpu=8) for n in range(5)])
    conf = SchedulerConfig({"scheduler": {"max_placement_results": 2}})
    table = measure(db_url, [Flavor("m2", 2, 1024, 10)], conf)["m2"]
    assert [host.fits for host in table.hosts] == [4] * 5
    assert unlimited([("limit", "2"), ("resources", "VCPU:1")]) == [("resources", "VCPU:1")]


def test_filters_drop_hosts_with_the_filter_as_reason(db_url):
    seed(db_url, [compute_node("cmp-a", vcpu=8), compute_node("cmp-b", vcpu=8)])
    conf = SchedulerConfig({"filter_scheduler": {"enabled_filters": ["NumInstancesFilter"],
                                                 "max_instances_per_host": 3}})
    table = measure(db_url, [Flavor("m1", 1, 512, 1)], conf)["m1"]
    assert rows(table) == {"cmp-a": (True, 3), "cmp-b": (True, 3)}


def test_a_refusing_request_filter_gives_no_host_and_says_why(db_url):
    seed(db_url, [compute_node("cmp-a")])
    refused = Flavor("tpm", 1, 512, 1, extra_specs={"hw:tpm_version": "2.0",
                                                    "hw:tpm_secret_security": "bogus"})
    tables = measure(db_url, [refused, Flavor("ok", 1, 512, 1)])
    assert tables["tpm"].hosts == [] and tables["tpm"].total == 0
    assert tables["tpm"].notes[0].startswith("a request filter refuses it:")
    assert rows(tables["ok"]) == {"cmp-a": (True, 16)}


def test_hosts_built_once_stay_up_however_long_the_run(db_url, monkeypatch):
    # each HostState is built at the first flavor and forked for the later ones:
    # an hour between flavors must not age its heartbeat past service_down_time
    seed(db_url, [compute_node("cmp-a", vcpu=8), compute_node("cmp-b", vcpu=8)])
    clock = [time.time()]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    check = CapacityCheck(SchedulerConfig(), PlacementHostStates())

    def ask(connection, query):
        clock[0] += 3600
        return read_view(connection, query)

    tables = read_database(db_url, lambda connection: check.run(
        [Flavor("m1", 1, 512, 1), Flavor("m2", 2, 512, 1)],
        functools.partial(ask, connection))).by_name()
    assert rows(tables["m2"]) == {"cmp-a": (True, 4), "cmp-b": (True, 4)}


def test_flavors_asking_the_same_query_share_one_answer(db_url):
    seed(db_url, [compute_node("cmp-a", vcpu=8, inventories={"PCPU": 4}),
                  compute_node("cmp-b", vcpu=8)])
    plain = Flavor("m2", 2, 1024, 10)
    same = Flavor("m2-watched", 2, 1024, 10, extra_specs={"hw:watchdog_action": "reset"})
    # pinned: the PCPU query, and a VCPU fallback identical to m2's
    pinned = Flavor("p2", 2, 1024, 10, extra_specs={"hw:cpu_policy": "dedicated"})
    asked = []

    def ask(connection, query):
        asked.append(tuple(query))
        return read_view(connection, query)

    check = CapacityCheck(SchedulerConfig(), PlacementHostStates())
    together = read_database(db_url, lambda connection: check.run(
        [plain, same, pinned], functools.partial(ask, connection)))
    assert len(asked) == len(set(asked)) == 2
    # each flavor alone gives the same table
    for flavor in (plain, same, pinned):
        assert measure(db_url, [flavor])[flavor.name].to_dict() == \
            together.by_name()[flavor.name].to_dict()
    # cmp-a: two on its PCPU, then four on the VCPU fallback (no NUMA cells known)
    assert rows(together.by_name()["p2"]) == {"cmp-a": (True, 6), "cmp-b": (True, 4)}

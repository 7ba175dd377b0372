"""Same/DifferentHost, SimpleCIDRAffinity and the server-group filters."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.filters.affinity import AddrFormatError
from tests.unit.nova_reshape.scheduler.helpers import host, passes, run_filter

A, B, C = ("aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002",
           "aaaaaaaa-0000-4000-8000-000000000003")
HOSTS = [host("h1", instances=[A]), host("h2", instances=[B]), host("h3")]


@pytest.mark.parametrize(("hint", "same", "different"), [
    (A, ["h1"], ["h2", "h3"]),
    ([A, B], ["h1", "h2"], ["h3"]),
    ([C], [], ["h1", "h2", "h3"]),
    ([], ["h1", "h2", "h3"], ["h1", "h2", "h3"]),
])
def test_same_and_different_host(hint, same, different):
    assert passes("SameHostFilter", HOSTS, request={"scheduler_hints": {"same_host": hint}}) \
        == same
    assert passes("DifferentHostFilter", HOSTS,
                  request={"scheduler_hints": {"different_host": hint}}) == different


def test_different_host_reason_names_the_instance():
    _, rejected = run_filter("DifferentHostFilter", HOSTS,
                             request={"scheduler_hints": {"different_host": A}})
    assert A in rejected["h1"]


CIDR_HOSTS = [host("h1", host_ip="192.168.1.10"), host("h2", host_ip="192.168.2.10"),
              host("h3", host_ip="192.168.1.124"), host("h4", host_ip="fe80::1")]


@pytest.mark.parametrize(("hints", "expected"), [
    ({"build_near_host_ip": "192.168.1.1"}, ["h1", "h3"]),
    ({"build_near_host_ip": "192.168.1.1", "cidr": "/16"}, ["h1", "h2", "h3"]),
    # string concatenation: "192.168.1.1" + "24" is the single address .124
    ({"build_near_host_ip": "192.168.1.1", "cidr": "24"}, ["h3"]),
    ({}, ["h1", "h2", "h3", "h4"]),
])
def test_simple_cidr_affinity(hints, expected):
    assert passes("SimpleCIDRAffinityFilter", CIDR_HOSTS,
                  request={"scheduler_hints": hints}) == expected


def test_simple_cidr_affinity_bad_network_raises_addr_format_error():
    with pytest.raises(AddrFormatError):
        run_filter("SimpleCIDRAffinityFilter", CIDR_HOSTS,
                   request={"scheduler_hints": {"build_near_host_ip": "nope"}})


def test_simple_cidr_affinity_bad_host_ip_raises():
    with pytest.raises(AddrFormatError):
        run_filter("SimpleCIDRAffinityFilter", [host("h1", host_ip="x.y")],
                   request={"scheduler_hints": {"build_near_host_ip": "10.0.0.1"}})


def _group(policy, members, **extra):
    group = {"name": "g", "policy": policy, "members": members}
    group.update(extra)
    return {"instance_group": group}


def test_affinity_without_group_hosts_passes_all():
    assert passes("ServerGroupAffinityFilter", HOSTS, request=_group("affinity", [C])) == \
        ["h1", "h2", "h3"]


def test_affinity_keeps_group_hosts_by_service_host_name():
    hosts = [host("h1", nodename="n1", instances=[A]), host("h1", nodename="n2"), host("h2")]
    kept, rejected = run_filter("ServerGroupAffinityFilter", hosts,
                                request=_group("affinity", [A, C]))
    assert kept == ["h1/n1", "h1/n2"]
    assert "affinity" in rejected["h2"]


def test_affinity_filter_ignores_other_policies():
    assert passes("ServerGroupAffinityFilter", HOSTS,
                  request=_group("anti-affinity", [A], hosts=["h1"])) == ["h1", "h2", "h3"]


def test_anti_affinity_drops_hosts_with_members():
    kept, rejected = run_filter("ServerGroupAntiAffinityFilter", HOSTS,
                                request=_group("anti-affinity", [A, C]))
    assert kept == ["h2", "h3"]
    assert "max_server_per_host 1" in rejected["h1"]


def test_anti_affinity_max_server_per_host_rule():
    hosts = [host("h1", instances=[A, B]), host("h2", instances=[A])]
    assert passes("ServerGroupAntiAffinityFilter", hosts,
                  request=_group("anti-affinity", [A, B, C],
                                 rules={"max_server_per_host": 2})) == ["h2"]


def test_anti_affinity_passes_host_already_running_the_instance():
    request = _group("anti-affinity", [A, B])
    request["instance_uuids"] = [A]
    # h1 runs A itself (a move) and passes; h2 runs member B.
    assert passes("ServerGroupAntiAffinityFilter", HOSTS, request=request) == ["h1", "h3"]


def test_anti_affinity_ignores_soft_policy():
    assert passes("ServerGroupAntiAffinityFilter", HOSTS,
                  request=_group("soft-anti-affinity", [A])) == ["h1", "h2", "h3"]

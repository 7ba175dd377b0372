"""select_destinations end to end against this project's Placement (PlacementDirect).

Hosts are seeded straight into the database (seeding.py); everything the
scheduler does goes through the report client over Placement's API: one
candidates query, claims with PUT /allocations, cleanup with DELETE. Every
test runs on every enabled engine (``db_url``).
"""

from __future__ import annotations

import json
import uuid
from urllib.parse import parse_qsl, urlsplit

import pytest

from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.errors import NoValidHost
from nova_reshape.scheduler.request_spec import Destination, RequestSpec
from tests.functional.nova_reshape.scheduler.conftest import (
    consumer,
    make_manager,
    placement,
    usages,
)
from tests.functional.nova_reshape.scheduler.seeding import Provider, compute_node, seed

GB = 1024


def new_uuids(count: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(count)]


def flavor_spec(vcpus: int = 2, memory_mb: int = 1024, root_gb: int = 10,
                **kwargs) -> RequestSpec:
    return RequestSpec(flavor=Flavor(vcpus=vcpus, memory_mb=memory_mb, root_gb=root_gb,
                                     extra_specs=kwargs.pop("extra_specs", {})), **kwargs)


def query_of(url: str) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(url).query)


def test_one_request_over_hundreds_of_hosts(db_url):
    hosts = [compute_node(f"cn{i:03d}", memory_mb=16 * GB + i * 64,
                          traits=["COMPUTE_STATUS_DISABLED"] if i % 10 == 9 else [])
             for i in range(300)]
    seed(db_url, hosts)
    by_name = {h.name: h.uuid for h in hosts}
    with placement(db_url) as client:
        manager, recording = make_manager(client)
        spec = flavor_spec(project_id="p1", user_id="u1")
        (instance,) = new_uuids(1)
        (selections,) = manager.select_destinations(None, spec, [instance])

        # cn299 has the most RAM but is disabled: root_required keeps it out.
        assert [s.nodename for s in selections] == ["cn298", "cn297", "cn296"]
        (query_url,) = recording.urls("GET", "/allocation_candidates")
        query = dict(query_of(query_url))
        assert query["limit"] == "1000"
        assert query["root_required"] == "OWNER_NOVA,!COMPUTE_STATUS_DISABLED"  # nova 34 computes
        assert query["resources"] == "DISK_GB:10,MEMORY_MB:1024,VCPU:2"
        assert len(manager.last_traces[0].candidates) == 270

        chosen = selections[0]
        assert chosen.compute_node_uuid == by_name["cn298"]
        assert chosen.allocation_request_version == "1.36"
        request = json.loads(chosen.allocation_request)
        assert request["mappings"] == {"": [by_name["cn298"]]}
        held = consumer(client, instance)
        assert held["allocations"] == {by_name["cn298"]: {
            "resources": {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}, "generation": 1}}
        assert (held["project_id"], held["user_id"]) == ("p1", "u1")
        for alternate in selections[1:]:  # alternates carry a candidate but hold nothing
            assert list(json.loads(alternate.allocation_request)["allocations"]) == [
                alternate.compute_node_uuid]
            assert usages(client, alternate.compute_node_uuid) == {}
        assert recording.urls("PUT") == [f"/allocations/{instance}"]


def test_instances_of_one_request_consume_and_a_failed_claim_moves_on(db_url):
    # Each host fits one 4-vCPU instance; RAM order A > B > C > D.
    names = {"A": 64, "B": 32, "C": 16, "D": 8}
    hosts = [compute_node(n, vcpu=4, memory_mb=gb * GB) for n, gb in names.items()]
    seed(db_url, hosts)
    uuid_of = {h.name: h.uuid for h in hosts}
    with placement(db_url) as client:
        manager, recording = make_manager(client)
        instances = new_uuids(3)
        result = manager.select_destinations(None, flavor_spec(vcpus=4), instances)

        assert [group[0].nodename for group in result] == ["A", "B", "C"]
        # A stays first by RAM for every instance, so later instances fail to
        # claim it (its vCPUs are gone) and move down the list.
        assert recording.urls("PUT") == [f"/allocations/{instances[0]}"] + \
            [f"/allocations/{instances[1]}"] * 2 + [f"/allocations/{instances[2]}"] * 3
        for instance, name in zip(instances, "ABC", strict=True):
            assert list(consumer(client, instance)["allocations"]) == [uuid_of[name]]
            assert usages(client, uuid_of[name])["VCPU"] == 4
        # Alternates exclude every selected host: only D is left for each.
        assert [[s.nodename for s in group[1:]] for group in result] == [["D"]] * 3
        assert usages(client, uuid_of["D"]) == {}


def test_consumption_between_instances_changes_the_weighing(db_url):
    hosts = [compute_node("E", memory_mb=10 * GB), compute_node("F", memory_mb=9 * GB + 512)]
    seed(db_url, hosts)
    with placement(db_url) as client:
        manager, _ = make_manager(client)
        result = manager.select_destinations(None, flavor_spec(memory_mb=GB), new_uuids(2),
                                             return_alternates=False)
    # After E takes 1 GB it has 9 GB free, less than F's 9.5 GB.
    assert [[s.nodename for s in group] for group in result] == [["E"], ["F"]]


def test_not_enough_capacity_deletes_the_claims_already_made(db_url):
    hosts = [compute_node("A", vcpu=4, memory_mb=16 * GB), compute_node("B", vcpu=4)]
    seed(db_url, hosts)
    with placement(db_url) as client:
        manager, recording = make_manager(client)
        instances = new_uuids(3)
        with pytest.raises(NoValidHost) as caught:
            manager.select_destinations(None, flavor_spec(vcpus=4), instances)
        error = caught.value
        assert str(error) == "No valid host was found. There are not enough hosts available."
        assert error.instance_index == 2 and error.filter_name is None
        assert set(error.reasons) == {"A", "B"}
        assert all(reason.startswith("claim: ") for reason in error.reasons.values())
        for instance in instances:
            assert consumer(client, instance)["allocations"] == {}
        assert sorted(recording.urls("DELETE")) == sorted(
            f"/allocations/{i}" for i in instances[:2])
        assert all(usages(client, h.uuid) == {} for h in hosts)


def test_no_valid_host_names_the_filter_that_emptied_the_list(db_url):
    seed(db_url, [compute_node(f"cn{i}") for i in range(5)])
    with placement(db_url) as client:
        manager, recording = make_manager(client, {"filter_scheduler": {
            "enabled_filters": ["ComputeFilter", "ComputeCapabilitiesFilter",
                                "ImagePropertiesFilter"]}})
        spec = flavor_spec(extra_specs={"capabilities:hypervisor_type": "s== Xen"})
        with pytest.raises(NoValidHost) as caught:
            manager.select_destinations(None, spec, new_uuids(1))
        error = caught.value
        assert error.filter_name == "ComputeCapabilitiesFilter"
        assert set(error.reasons) == {f"cn{i}" for i in range(5)}
        assert all(r.startswith("ComputeCapabilitiesFilter: ")
                   for r in error.reasons.values())
        assert recording.urls("PUT") == []


def test_no_candidates_is_no_valid_host_without_any_claim(db_url):
    seed(db_url, [compute_node("small", memory_mb=GB)])
    with placement(db_url) as client:
        manager, recording = make_manager(client)
        with pytest.raises(NoValidHost, match="Placement returned no allocation candidates"):
            manager.select_destinations(None, flavor_spec(memory_mb=2 * GB), new_uuids(1))
        assert recording.urls("PUT") == []


def test_alternates_come_from_the_selected_hosts_cell(db_url):
    hosts = [compute_node(f"h{i}", memory_mb=(64 - 8 * i) * GB) for i in range(1, 7)]
    seed(db_url, hosts)
    cells = {"h1": "cell1", "h2": "cell2", "h3": "cell1", "h4": "cell2", "h5": "cell1",
             "h6": "cell1"}
    nodes = {h.uuid: {"host": h.name, "cell": cells[h.name]} for h in hosts}
    with placement(db_url) as client:
        manager, _ = make_manager(client, nodes=nodes)
        (group,) = manager.select_destinations(None, flavor_spec(), new_uuids(1))
        assert [s.nodename for s in group] == ["h1", "h3", "h5"]
        assert len({s.cell_uuid for s in group}) == 1
        (alone,) = manager.select_destinations(None, flavor_spec(), new_uuids(1),
                                               return_alternates=False)
        assert [s.nodename for s in alone] == ["h1"]
        in_cell2 = flavor_spec(requested_destination=Destination(cell="cell2"))
        (group,) = manager.select_destinations(None, in_cell2, new_uuids(1))
        assert [s.nodename for s in group] == ["h2", "h4"]  # fewer alternates is fine
        legacy = manager.select_destinations(None, flavor_spec(), new_uuids(1),
                                             return_objects=False)
        assert legacy == [{"host": "h1", "nodename": "h1", "limits": {}}]
        few, _ = make_manager(client, {"scheduler": {"max_attempts": 1}}, nodes=nodes)
        (group,) = few.select_destinations(None, flavor_spec(), new_uuids(1))
        assert [s.nodename for s in group] == ["h1"]


def test_sharing_providers_are_not_hosts(db_url):
    aggregate = str(uuid.uuid4())
    host = Provider("shared-disk-host", inventories={"VCPU": 8, "MEMORY_MB": 8 * GB},
                    aggregates=[aggregate])
    share = Provider("disk-pool", inventories={"DISK_GB": 1000},
                     traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[aggregate])
    seed(db_url, [host, share])
    with placement(db_url) as client:
        manager, _ = make_manager(client)
        instance = new_uuids(1)
        (group,) = manager.select_destinations(None, flavor_spec(root_gb=20), instance)
        assert [s.nodename for s in group] == ["shared-disk-host"]
        assert [h.host for h in manager.last_traces[0].candidates] == ["shared-disk-host"]
        assert consumer(client, instance[0])["allocations"][share.uuid]["resources"] == {
            "DISK_GB": 20}


def test_a_forced_host_becomes_in_tree_and_skips_filters(db_url):
    hosts = [compute_node(f"cn{i}", memory_mb=(8 + i) * GB) for i in range(10)]
    seed(db_url, hosts)
    with placement(db_url) as client:
        manager, recording = make_manager(client)
        (group,) = manager.select_destinations(None, flavor_spec(force_hosts=["cn3"]),
                                               new_uuids(1))
        assert [s.nodename for s in group] == ["cn3"]
        query = dict(query_of(recording.urls("GET", "/allocation_candidates")[0]))
        assert query["in_tree"] == hosts[3].uuid
        assert manager.last_traces[0].forced


def test_pinned_cpus_query_pcpu_then_fall_back_to_vcpu(db_url):
    pcpu_host = Provider("pinned", inventories={"PCPU": 8, "MEMORY_MB": 8 * GB,
                                                "DISK_GB": 100})
    vcpu_host = Provider("shared", inventories={"VCPU": 8, "MEMORY_MB": 16 * GB,
                                                "DISK_GB": 100})
    seed(db_url, [pcpu_host, vcpu_host])
    spec = flavor_spec(extra_specs={"hw:cpu_policy": "dedicated"})
    with placement(db_url) as client:
        manager, recording = make_manager(client)
        instance = new_uuids(1)
        (group,) = manager.select_destinations(None, spec, instance)
        queries = [dict(query_of(u)) for u in recording.urls("GET", "/allocation_candidates")]
        assert [q["resources"] for q in queries] == ["DISK_GB:10,MEMORY_MB:1024,PCPU:2",
                                                     "DISK_GB:10,MEMORY_MB:1024,VCPU:2"]
        # Both queries' candidates were merged; the un-reshaped host has more RAM.
        assert [s.nodename for s in group] == ["shared", "pinned"]
        assert consumer(client, instance[0])["allocations"][vcpu_host.uuid]["resources"][
            "VCPU"] == 2
        strict, recording = make_manager(
            client, {"workarounds": {"disable_fallback_pcpu_query": True}})
        (group,) = strict.select_destinations(None, spec, new_uuids(1))
        assert [s.nodename for s in group] == ["pinned"]
        assert len(recording.urls("GET", "/allocation_candidates")) == 1


def test_rebuild_takes_the_legacy_path_without_placement(db_url):
    seed(db_url, [compute_node(f"cn{i}") for i in range(3)])
    with placement(db_url) as client:
        manager, recording = make_manager(client)
        spec = flavor_spec(scheduler_hints={"_nova_check_type": ["rebuild"]},
                           requested_destination=Destination(host="cn1"))
        (group,) = manager.select_destinations(None, spec, new_uuids(1))
        assert [s.nodename for s in group] == ["cn1"]
        assert group[0].allocation_request == "null"
        assert group[0].allocation_request_version is None
        assert recording.urls("GET", "/allocation_candidates") == []
        assert recording.urls("PUT") == []


def test_pci_aliases_are_scheduled_in_placement_when_enabled(db_url):
    from nova_reshape.scheduler.pci import PciRequest

    gpu_host = compute_node("gpu-host", memory_mb=8 * GB, children=[Provider(
        "gpu-host_0000:D8:00.0", inventories={"CUSTOM_PCI_10DE_20B5": 2},
        traits=["COMPUTE_MANAGED_PCI_DEVICE", "OWNER_NOVA"])])
    seed(db_url, [gpu_host, compute_node("plain", memory_mb=64 * GB)])
    device = gpu_host.children[0].uuid
    spec = flavor_spec(pci_requests=[PciRequest(
        count=2, spec=[{"vendor_id": "10de", "product_id": "20b5"}], alias_name="a100",
        request_id="req")])
    with placement(db_url) as client:
        manager, recording = make_manager(client, {"filter_scheduler": {
            "pci_in_placement": True}})
        instance = new_uuids(1)
        (group,) = manager.select_destinations(None, spec, instance)
        query = dict(query_of(recording.urls("GET", "/allocation_candidates")[0]))
        assert query["resourcesreq-0"] == query["resourcesreq-1"] == "CUSTOM_PCI_10DE_20B5:1"
        assert query["group_policy"] == "none"
        assert [s.nodename for s in group] == ["gpu-host"]
        mappings = json.loads(group[0].allocation_request)["mappings"]
        assert mappings["req-0"] == mappings["req-1"] == [device]
        assert consumer(client, instance[0])["allocations"][device]["resources"] == {
            "CUSTOM_PCI_10DE_20B5": 2}


def test_anti_affinity_runs_out_of_hosts_on_the_third_instance(db_url):
    from nova_reshape.scheduler.request_spec import InstanceGroup

    seed(db_url, [compute_node("A", memory_mb=32 * GB), compute_node("B")])
    instances = new_uuids(3)
    group = InstanceGroup(name="g", uuid=str(uuid.uuid4()), policy="anti-affinity",
                          members=list(instances))
    with placement(db_url) as client:
        manager, recording = make_manager(client)
        with pytest.raises(NoValidHost) as caught:
            manager.select_destinations(None, flavor_spec(
                instance_group=group, scheduler_hints={"group": [group.uuid]}), instances)
        error = caught.value
        assert (error.instance_index, error.filter_name) == (2, "ServerGroupAntiAffinityFilter")
        # A was dropped for instance 1 already (instance 2 starts from instance
        # 1's list); B is what the filter emptied for instance 2.
        assert error.reasons["B"].startswith("ServerGroupAntiAffinityFilter: ")
        assert error.reasons["A"].startswith("ServerGroupAntiAffinityFilter: ")
        assert error.reasons["A"].endswith("(for instance 1)")
        assert group.hosts == ["A", "B"]  # the first two were placed, then released
        assert len(recording.urls("PUT")) == 2
        assert all(consumer(client, i)["allocations"] == {} for i in instances)
        # The group hint drops the limit so that Placement returns every host.
        query = dict(query_of(recording.urls("GET", "/allocation_candidates")[0]))
        assert "limit" not in query

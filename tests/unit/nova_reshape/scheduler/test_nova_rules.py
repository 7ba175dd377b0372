"""Scenario-style checks of rules whose expected results come from nova 34's code.

Each test states, in its docstring, what nova does and where; the expected
values are derived by hand from that reading, not from running this code.
"""

from __future__ import annotations

from nova_reshape.scheduler.result import result_to_dict
from tests.unit.nova_reshape.scheduler.helpers import host, schedule


def _run(hosts, request=None, filters=("ComputeFilter",), weighers=("RAMWeigher",),
         **options):
    config = {"filter_scheduler": dict({"enabled_filters": list(filters),
                                        "weight_classes": list(weighers)}, **options)}
    return result_to_dict(schedule(hosts, request, config))


# -- forced hosts and nodes ---------------------------------------------------

def test_forced_host_skips_every_filter_even_one_that_would_drop_it():
    """HostManager.get_filtered_hosts: with force_hosts and no ``_nova_check_type``
    hint it returns the matching hosts without calling any filter, so a
    disabled host is still chosen."""
    hosts = [host("h1"), host("h2", enabled=False), host("h3")]
    out = _run(hosts, {"force_hosts": ["H2"]})
    first = out["instances"][0]
    assert first["forced"] is True and first["candidates"] is None
    assert first["filters"] == [] and first["passed"] == ["h2"]
    assert out["selected"] == ["h2"]


def test_force_nodes_and_force_hosts_both_apply():
    """Forcing keeps a node only if it matches force_hosts (case-insensitive host)
    and force_nodes (exact nodename); the survivors keep the input order."""
    hosts = [host("h1", nodename="n1"), host("h1", nodename="n2"),
             host("h2", nodename="n3"), host("h1", nodename="n4")]
    out = _run(hosts, {"force_hosts": ["h1"], "force_nodes": ["n4", "n2", "n3"]})
    first = out["instances"][0]
    assert first["forced"] is True
    assert first["passed"] == ["h1/n2", "h1/n4"]


def test_forced_hosts_every_instance_of_a_multi_create_is_forced():
    """The pre-filter runs for every instance: each one is forced again."""
    hosts = [host("h1"), host("h2")]
    out = _run(hosts, {"force_hosts": ["h1", "h2"], "num_instances": 2})
    assert [i["forced"] for i in out["instances"]] == [True, True]


def test_forcing_that_matches_nothing_is_no_valid_host_without_filters():
    """nova returns ``[]`` straight from the forcing branch: no filter is called."""
    out = _run([host("h1")], {"force_nodes": ["nope"]})
    first = out["instances"][0]
    assert first["forced"] is True and first["filters"] == []
    assert out["no_valid_host"] is True


def test_check_type_hint_makes_forced_hosts_go_through_the_filters():
    """With ``_nova_check_type`` (rebuild) forcing narrows the list but the
    filters still run (ComputeFilter does nothing on rebuild: RUN_ON_REBUILD
    is False, so it passes the disabled host)."""
    hosts = [host("h1"), host("h2", enabled=False)]
    out = _run(hosts, {"force_hosts": ["h2"], "rebuild": True})
    first = out["instances"][0]
    assert first["forced"] is False and first["candidates"] == ["h2"]
    assert first["filters"] == [{"name": "ComputeFilter", "hosts": ["h2"]}]


# -- JsonFilter queries nova passes --------------------------------------------

JSON_HOSTS = [host("h1", memory_mb=8192, stats={"tier": "gold"}),
              host("h2", memory_mb=0),
              host("h3", memory_mb=512, enabled=False)]


def _json(query):
    return [h for h in _run(JSON_HOSTS, {"scheduler_hints": {"query": query}},
                            filters=("JsonFilter",))["instances"][0]["passed"]]


def test_json_or_is_any_so_a_truthy_number_passes():
    """JsonFilter._or is ``any(args)``: a non-zero number is truthy, 0 is not."""
    assert _json(["or", "$free_ram_mb"]) == ["h1", "h3"]


def test_json_or_with_a_string_argument_passes():
    """``any([False, "gold"])`` is True; h2/h3 have no tier, the stat is dropped."""
    assert _json(["or", ["=", "$host", "zz"], "$stats.tier"]) == ["h1"]


def test_json_and_with_an_empty_not_list_is_false():
    """``not`` of no argument is ``[]`` and ``all([[]])`` is False: nothing passes."""
    assert _json(["and", ["not"]]) == []


def test_json_service_fields_are_dict_lookups():
    """nova keeps ``HostState.service`` as a dict, so ``$service.disabled``
    works through ``.get``: the disabled host h3 is the only one dropped."""
    assert _json(["=", "$service.disabled", False]) == ["h1", "h2"]


# -- ImagePropertiesWeigher over a multi-create --------------------------------

UUIDS = ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"]
UBUNTU = {"os_distro": "ubuntu"}


def _image_props_hosts():
    return [host("h1", instances=[{"uuid": "a1", "image_properties": UBUNTU}]),
            host("h2", instances=[{"uuid": "b1", "image_properties": UBUNTU},
                                  {"uuid": "b2", "image_properties": UBUNTU},
                                  {"uuid": "b3", "image_properties": {"os_distro": "rhel"}}])]


def test_image_props_weigher_fails_on_the_stub_of_a_multi_create_in_a_group():
    """Between the instances of a multi-create in a server group nova puts a
    stub ``objects.Instance(uuid=...)`` (no context) on the chosen host.
    ImagePropertiesWeigher then reads every instance's image metadata; for the
    stub that lazy-loads ``system_metadata`` without a context, which raises
    OrphanedObjectError (only InstanceNotFound is caught), so the second
    instance fails at the weighing stage. Instance 0 is weighed normally:
    h2 has two ubuntu instances, h1 one."""
    request = {"num_instances": 2, "instance_uuids": UUIDS, "image": {"properties": UBUNTU},
               "instance_group": {"policy": "soft-affinity", "members": UUIDS}}
    out = _run(_image_props_hosts(), request, filters=("AllHostsFilter",),
               weighers=("ImagePropertiesWeigher",), image_props_weight_multiplier=1.0)
    raw = {w["host"]: w["weighers"]["ImagePropertiesWeigher"]["raw"]
           for w in out["instances"][0]["weighed"]}
    assert raw == {"h1": 1.0, "h2": 2.0}
    assert out["error"]["stage"] == "weigh" and out["error"]["instance_index"] == 1
    assert (out["error"]["weigher"], out["error"]["type"]) == (
        "ImagePropertiesWeigher", "OrphanedObjectError")


def test_image_props_weigher_without_a_group_counts_the_same_each_instance():
    """Without a server group nova adds no stub: the new instance is not on any
    host yet, so instance 1 sees exactly instance 0's raw values."""
    request = {"num_instances": 2, "instance_uuids": UUIDS, "image": {"properties": UBUNTU}}
    out = _run(_image_props_hosts(), request, filters=("AllHostsFilter",),
               weighers=("ImagePropertiesWeigher",), image_props_weight_multiplier=1.0)
    assert out["error"] is None
    for instance in out["instances"]:
        raw = {w["host"]: w["weighers"]["ImagePropertiesWeigher"]["raw"]
               for w in instance["weighed"]}
        assert raw == {"h1": 1.0, "h2": 2.0}
    assert out["selected"] == ["h2", "h2"]


def test_image_props_weigher_is_off_when_the_global_multiplier_is_zero():
    """A zero ``image_props_weight_multiplier`` returns 0.0 before any instance
    is read, so the stub of a grouped multi-create raises nothing."""
    request = {"num_instances": 2, "instance_uuids": UUIDS, "image": {"properties": UBUNTU},
               "instance_group": {"policy": "soft-affinity", "members": UUIDS}}
    out = _run(_image_props_hosts(), request, filters=("AllHostsFilter",),
               weighers=("ImagePropertiesWeigher",))
    assert out["error"] is None and len(out["selected"]) == 2


def test_image_props_weigher_setting_weighs_each_matching_occurrence():
    """With ``image_props_weight_setting`` each common (property, value) pair
    counts ``setting[prop] × occurrences`` and unlisted properties count 0."""
    props = {"os_distro": "ubuntu", "hw_disk_bus": "virtio"}
    hosts = [host("h1", instances=[{"uuid": "a1", "image_properties": props},
                                   {"uuid": "a2", "image_properties": props}]),
             host("h2", instances=[{"uuid": "b1", "image_properties": {"hw_disk_bus": "virtio"}}])]
    out = _run(hosts, {"image": {"properties": props}}, filters=("AllHostsFilter",),
               weighers=("ImagePropertiesWeigher",), image_props_weight_multiplier=1.0,
               image_props_weight_setting=["os_distro=2.5"])
    raw = {w["host"]: w["weighers"]["ImagePropertiesWeigher"]["raw"]
           for w in out["instances"][0]["weighed"]}
    assert raw == {"h1": 5.0, "h2": 0.0}

"""ComputeCapabilitiesFilter and AggregateInstanceExtraSpecsFilter."""

from __future__ import annotations

import pytest

from tests.unit.nova_reshape.scheduler.helpers import host, passes, run_filter

CPU = {"arch": "x86_64", "features": ["sse", "avx2"], "maxphysaddr": {"bits": 46}}


def _flavor(**extra_specs):
    return {"flavor": {"extra_specs": extra_specs}}


def test_no_extra_specs_passes_everything():
    assert passes("ComputeCapabilitiesFilter", [host("h1"), host("h2")]) == ["h1", "h2"]


def test_bare_key_checks_host_attribute():
    hosts = [host("h1", memory_mb=4096), host("h2", memory_mb=1024)]
    kept, rejected = run_filter("ComputeCapabilitiesFilter", hosts,
                                request=_flavor(free_ram_mb=">= 2048"))
    assert kept == ["h1"]
    assert "free_ram_mb" in rejected["h2"] and "1024" in rejected["h2"]


def test_bare_key_unknown_to_host_is_ignored():
    assert passes("ComputeCapabilitiesFilter", [host("h1")],
                  request=_flavor(rack="s== r1")) == ["h1"]


def test_bare_key_checked_only_on_hosts_with_that_stat():
    hosts = [host("h1"), host("h2", stats={"rack": "r2"}), host("h3", stats={"rack": "r1"})]
    assert passes("ComputeCapabilitiesFilter", hosts,
                  request=_flavor(rack="s== r1")) == ["h1", "h3"]


@pytest.mark.parametrize("key", ["hw:watchdog_action", "trait:HW_CPU_X86_AVX", "resources:VCPU",
                                 "aggregate_instance_extra_specs:ssd", "quota:cpu_shares"])
def test_other_scopes_are_ignored(key):
    assert passes("ComputeCapabilitiesFilter", [host("h1")],
                  request=_flavor(**{key: "s== nothing"})) == ["h1"]


def test_capabilities_scope_nested_cpu_info_is_parsed_and_stringified():
    hosts = [host("h1", cpu_info=CPU), host("h2", cpu_info={"features": ["sse"]})]
    kept, rejected = run_filter("ComputeCapabilitiesFilter", hosts,
                                request=_flavor(**{"capabilities:cpu_info:features": "<in> avx"}))
    assert kept == ["h1"]
    assert "['sse']" in rejected["h2"]


def test_cpu_info_given_as_json_string_works_too():
    hosts = [host("h1", cpu_info='{"arch": "x86_64"}')]
    assert passes("ComputeCapabilitiesFilter", hosts,
                  request=_flavor(**{"capabilities:cpu_info:arch": "s== x86_64"})) == ["h1"]


def test_invalid_cpu_info_json_fails_the_host():
    kept, rejected = run_filter("ComputeCapabilitiesFilter", [host("h1", cpu_info="{nope")],
                                request=_flavor(**{"capabilities:cpu_info:arch": "s== x86_64"}))
    assert kept == [] and "no capability cpu_info:arch" in rejected["h1"]


def test_missing_nested_key_fails_the_host():
    assert passes("ComputeCapabilitiesFilter", [host("h1", cpu_info=CPU)],
                  request=_flavor(**{"capabilities:cpu_info:vendor": "s== Intel"})) == []


def test_capabilities_scope_falls_back_to_stats():
    hosts = [host("h1", stats={"tier": "gold"}), host("h2", stats={"tier": "silver"}),
             host("h3")]
    assert passes("ComputeCapabilitiesFilter", hosts,
                  request=_flavor(**{"capabilities:tier": "s== gold"})) == ["h1"]


def test_numeric_equals_means_at_least():
    hosts = [host("h1", vcpus=16), host("h2", vcpus=8), host("h3", vcpus=4)]
    assert passes("ComputeCapabilitiesFilter", hosts,
                  request=_flavor(**{"capabilities:vcpus_total": "= 8"})) == ["h1", "h2"]


def test_hypervisor_type_exact_string():
    hosts = [host("h1"), host("h2", hypervisor_type="VMware")]
    assert passes("ComputeCapabilitiesFilter", hosts,
                  request=_flavor(**{"capabilities:hypervisor_type": "QEMU"})) == ["h1"]


def test_maxphysaddr_bits_is_rewritten_to_a_cpu_info_minimum():
    hosts = [host("h1", cpu_info=CPU), host("h2", cpu_info={"maxphysaddr": {"bits": 39}}),
             host("h3")]
    assert passes("ComputeCapabilitiesFilter", hosts,
                  request=_flavor(**{"hw:maxphysaddr_bits": "42"})) == ["h1"]


def test_numeric_operator_on_text_capability_raises():
    with pytest.raises(ValueError):
        run_filter("ComputeCapabilitiesFilter", [host("h1", stats={"tier": "gold"})],
                   request=_flavor(**{"capabilities:tier": ">= 2"}))


AGGS = [
    {"name": "a1", "hosts": ["h1"], "metadata": {"cpu_gen": "skylake, icelake", "ssd": "true"}},
    {"name": "a2", "hosts": ["h2"], "metadata": {"cpu_gen": "broadwell"}},
    {"name": "a3", "hosts": ["h2", "h4"], "metadata": {"cpu_gen": "zen", "ssd": "false"}},
]
HOSTS = [host("h1"), host("h2"), host("h3"), host("h4")]


def test_aggregate_extra_specs_any_pooled_value_matches():
    assert passes("AggregateInstanceExtraSpecsFilter", HOSTS, aggregates=AGGS,
                  request=_flavor(**{"aggregate_instance_extra_specs:cpu_gen":
                                     "<or> icelake <or> zen"})) == ["h1", "h2", "h4"]


def test_aggregate_extra_specs_values_are_split_and_stripped():
    assert passes("AggregateInstanceExtraSpecsFilter", HOSTS, aggregates=AGGS,
                  request=_flavor(cpu_gen="icelake")) == ["h1"]


def test_aggregate_extra_specs_missing_key_fails_with_reason():
    kept, rejected = run_filter("AggregateInstanceExtraSpecsFilter", HOSTS, aggregates=AGGS,
                                request=_flavor(ssd="true"))
    assert kept == ["h1"]
    assert "no aggregate of the host has metadata ssd" in rejected["h3"]
    assert "matches none" in rejected["h4"]


def test_aggregate_extra_specs_ignores_other_scopes():
    assert passes("AggregateInstanceExtraSpecsFilter", HOSTS, aggregates=AGGS,
                  request=_flavor(**{"capabilities:x": "y", "hw:cpu_policy": "shared"})) == \
        ["h1", "h2", "h3", "h4"]


def test_aggregate_extra_specs_removes_only_first_scope_segment():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"x:y": "1"}}]
    assert passes("AggregateInstanceExtraSpecsFilter", [host("h1"), host("h2")], aggregates=aggs,
                  request=_flavor(**{"aggregate_instance_extra_specs:x:y": "1"})) == ["h1"]


def test_aggregate_extra_specs_numeric_operator_on_text_raises():
    with pytest.raises(ValueError):
        run_filter("AggregateInstanceExtraSpecsFilter", HOSTS, aggregates=AGGS,
                   request=_flavor(cpu_gen=">= 3"))

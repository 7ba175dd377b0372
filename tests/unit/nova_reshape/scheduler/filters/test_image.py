"""ImagePropertiesFilter, IsolatedHostsFilter, AggregateImagePropertiesIsolation."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.errors import ScenarioError
from tests.unit.nova_reshape.scheduler.helpers import host, passes, run_filter

KVM = [["x86_64", "kvm", "hvm"]]
IMAGE_ID = "11111111-2222-4333-8444-555555555555"


def _image(**props):
    return {"image": {"id": IMAGE_ID, "properties": props}}


def test_image_without_arch_hvtype_vmmode_passes_even_unsupported_hosts():
    hosts = [host("h1"), host("h2", supported_instances=KVM, hypervisor_version=1000000)]
    assert passes("ImagePropertiesFilter", hosts,
                  request=_image(img_hv_requested_version=">= 9.0")) == ["h1", "h2"]


def test_host_without_supported_instances_fails_when_image_asks():
    kept, rejected = run_filter("ImagePropertiesFilter", [host("h1")],
                                request=_image(hw_architecture="x86_64"))
    assert kept == [] and "no supported instances" in rejected["h1"]


def test_requested_values_must_all_be_in_one_entry_in_any_position():
    hosts = [host("h1", supported_instances=KVM),
             host("h2", supported_instances=[["aarch64", "kvm", "hvm"]]),
             host("h3", supported_instances=[["x86_64", "qemu", "hvm"], ["aarch64", "kvm", "hvm"]])]
    assert passes("ImagePropertiesFilter", hosts,
                  request=_image(hw_architecture="x86_64", img_hv_type="kvm")) == ["h1"]


def test_values_are_canonicalized():
    hosts = [host("h1", supported_instances=[["i686", "xen", "xen"]])]
    assert passes("ImagePropertiesFilter", hosts,
                  request=_image(hw_architecture="i386", img_hv_type="xapi",
                                 hw_vm_mode="pv")) == ["h1"]


def test_default_architecture_option_applies():
    hosts = [host("h1", supported_instances=KVM),
             host("h2", supported_instances=[["aarch64", "kvm", "hvm"]])]
    config = {"filter_scheduler": {"image_properties_default_architecture": "aarch64"}}
    assert passes("ImagePropertiesFilter", hosts, config=config,
                  request=_image(img_hv_type="kvm")) == ["h2"]


def test_version_predicate_checked_against_dotted_hypervisor_version():
    hosts = [host("h1", supported_instances=KVM, hypervisor_version=8002000),
             host("h2", supported_instances=KVM, hypervisor_version=6000000),
             host("h3", supported_instances=KVM, hypervisor_version=0)]
    kept, rejected = run_filter("ImagePropertiesFilter", hosts, request=_image(
        hw_architecture="x86_64", img_hv_requested_version=">= 7.0, < 9.0"))
    assert kept == ["h1", "h3"]
    assert "6.0.0" in rejected["h2"]


def test_invalid_version_predicate_raises():
    with pytest.raises(ValueError):
        run_filter("ImagePropertiesFilter",
                   [host("h1", supported_instances=KVM, hypervisor_version=8002000)],
                   request=_image(hw_architecture="x86_64", img_hv_requested_version="newest"))


def test_invalid_image_architecture_is_a_scenario_error():
    with pytest.raises(ScenarioError):
        run_filter("ImagePropertiesFilter", [host("h1")], request=_image(hw_architecture="z80"))


def test_maxphysaddr_compares_parsed_cpu_info_instead_of_crashing():
    hosts = [host("h1", cpu_info={"maxphysaddr": {"mode": "emulate", "bits": 46}}),
             host("h2", cpu_info={"maxphysaddr": {"mode": "emulate", "bits": 39}}),
             host("h3", cpu_info={"arch": "x86_64"}), host("h4")]
    kept, rejected = run_filter("ImagePropertiesFilter", hosts, request=_image(
        hw_maxphysaddr_mode="emulate", hw_maxphysaddr_bits=42))
    assert kept == ["h1"]
    assert "39" in rejected["h2"]
    assert "has none" in rejected["h3"] and "has none" in rejected["h4"]


ISO = {"isolated_hosts": ["h1", "h3"], "isolated_images": [IMAGE_ID]}
FOUR = [host("h1"), host("h2"), host("h3"), host("h4")]


@pytest.mark.parametrize(("restrict", "image", "expected"), [
    (True, IMAGE_ID, ["h1", "h3"]),
    (True, "99999999-2222-4333-8444-555555555555", ["h2", "h4"]),
    (True, None, ["h2", "h4"]),
    (False, IMAGE_ID, ["h1", "h3"]),
    (False, "99999999-2222-4333-8444-555555555555", ["h1", "h2", "h3", "h4"]),
])
def test_isolated_hosts_with_isolated_images(restrict, image, expected):
    config = {"filter_scheduler": dict(ISO, restrict_isolated_hosts_to_isolated_images=restrict)}
    request = {"image": {"id": image}} if image else {}
    assert passes("IsolatedHostsFilter", FOUR, config=config, request=request) == expected


def test_isolated_hosts_without_isolated_images():
    config = {"filter_scheduler": {"isolated_hosts": ["h1"]}}
    kept, rejected = run_filter("IsolatedHostsFilter", FOUR, config=config)
    assert kept == ["h2", "h3", "h4"] and "isolated" in rejected["h1"]
    config["filter_scheduler"]["restrict_isolated_hosts_to_isolated_images"] = False
    assert passes("IsolatedHostsFilter", FOUR, config=config) == ["h1", "h2", "h3", "h4"]


def test_isolated_image_without_isolated_hosts_fits_nowhere():
    config = {"filter_scheduler": {"isolated_images": [IMAGE_ID]}}
    assert passes("IsolatedHostsFilter", FOUR, config=config, request=_image()) == []


AGGS = [{"name": "linux", "hosts": ["h1"], "metadata": {"os_distro": "ubuntu, centos"}},
        {"name": "win", "hosts": ["h2"], "metadata": {"os_distro": "windows",
                                                       "not_a_property": "x"}},
        {"name": "ns", "hosts": ["h3"], "metadata": {"ns.os_distro": "windows"}}]


def test_aggregate_image_properties_isolation():
    hosts = [host("h1"), host("h2"), host("h3"), host("h4")]
    kept, rejected = run_filter("AggregateImagePropertiesIsolation", hosts, aggregates=AGGS,
                                request=_image(os_distro="ubuntu"))
    assert kept == ["h1", "h3", "h4"]
    assert "os_distro=ubuntu" in rejected["h2"]


def test_aggregate_image_properties_isolation_ignores_absent_or_falsy_props():
    hosts = [host("h1"), host("h2")]
    assert passes("AggregateImagePropertiesIsolation", hosts, aggregates=AGGS,
                  request=_image(hw_qemu_guest_agent="no")) == ["h1", "h2"]


def test_aggregate_image_properties_isolation_compares_str_of_coerced_values():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"hw_qemu_guest_agent": "True"}},
            {"name": "b", "hosts": ["h2"], "metadata": {"hw_qemu_guest_agent": "yes"}}]
    assert passes("AggregateImagePropertiesIsolation", [host("h1"), host("h2")],
                  aggregates=aggs, request=_image(hw_qemu_guest_agent="yes")) == ["h1"]


def test_aggregate_image_properties_isolation_namespace_only_checks_prefixed_keys():
    config = {"filter_scheduler": {"aggregate_image_properties_isolation_namespace": "ns"}}
    hosts = [host("h1"), host("h2"), host("h3")]
    # Prefixed keys are not image property names, so nothing is excluded.
    assert passes("AggregateImagePropertiesIsolation", hosts, aggregates=AGGS, config=config,
                  request=_image(os_distro="ubuntu")) == ["h1", "h2", "h3"]

"""RequestSpec -> ResourceRequest -> the query string nova sends."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote

import pytest

from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.pci import PciRequest
from nova_reshape.scheduler.request_spec import Destination, ImageMeta, RequestSpec
from nova_reshape.scheduler.resource_request import (
    RequestGroup,
    ResourceRequestError,
    from_request_spec,
    normalize_name,
    pci_request_groups,
)


def spec(vcpus=4, memory_mb=8192, root_gb=40, ephemeral_gb=0, swap=0, extra=None,
         image=None, **kwargs) -> RequestSpec:
    return RequestSpec(flavor=Flavor(vcpus=vcpus, memory_mb=memory_mb, root_gb=root_gb,
                                     ephemeral_gb=ephemeral_gb, swap=swap,
                                     extra_specs=dict(extra or {})),
                       image=ImageMeta(properties=dict(image or {})), **kwargs)


def params(request) -> list[tuple[str, str]]:
    return parse_qsl(request.to_querystring())


def test_the_documented_example_query_and_its_fallback():
    s = spec(extra={"resources1:VGPU": "1", "trait1:CUSTOM_NVIDIA_11": "required",
                    "hw:cpu_policy": "dedicated", "group_policy": "isolate"})
    s.root_forbidden.add("COMPUTE_STATUS_DISABLED")
    request = from_request_spec(s)
    assert unquote(request.to_querystring()) == (
        "group_policy=isolate&limit=1000&required1=CUSTOM_NVIDIA_11"
        "&resources=DISK_GB:40,MEMORY_MB:8192,PCPU:4&resources1=VGPU:1"
        "&root_required=!COMPUTE_STATUS_DISABLED")
    assert request.cpu_pinning_requested
    fallback = from_request_spec(s, translate_pinning=False)
    assert dict(params(fallback))["resources"] == "DISK_GB:40,MEMORY_MB:8192,VCPU:4"
    assert not fallback.cpu_pinning_requested


def test_commas_colons_and_bangs_are_percent_encoded_and_pairs_sorted():
    s = spec(extra={"trait:HW_CPU_X86_AVX": "forbidden"})
    s.root_forbidden.add("COMPUTE_STATUS_DISABLED")
    query = from_request_spec(s, max_placement_results=7).to_querystring()
    assert query == ("limit=7&required=%21HW_CPU_X86_AVX"
                     "&resources=DISK_GB%3A40%2CMEMORY_MB%3A8192%2CVCPU%3A4"
                     "&root_required=%21COMPUTE_STATUS_DISABLED")


def test_flavor_amounts_disk_sums_ephemeral_swap_and_root_unless_boot_from_volume():
    request = from_request_spec(spec(root_gb=20, ephemeral_gb=5, swap=1025))
    assert request.unsuffixed.resources == {"VCPU": 4, "MEMORY_MB": 8192, "DISK_GB": 27}
    bfv = from_request_spec(spec(root_gb=20, ephemeral_gb=0, swap=0, is_bfv=True))
    assert "DISK_GB" not in bfv.unsuffixed.resources


def test_resources_overrides_replace_and_zero_removes_a_class():
    request = from_request_spec(spec(extra={"resources:VCPU": "0", "resources:MEMORY_MB": "1",
                                            "resources:CUSTOM_MAGIC": "3"}))
    assert request.unsuffixed.resources == {"MEMORY_MB": 1, "CUSTOM_MAGIC": 3, "DISK_GB": 40}


def test_a_class_in_any_group_suppresses_the_flavor_amount():
    request = from_request_spec(spec(extra={"resources1:VCPU": "2", "resources2:PCPU": "1",
                                            "resources_m:MEMORY_MB": "512"}))
    assert request.unsuffixed.resources == {"DISK_GB": 40}
    groups = request.groups()
    assert groups["1"].resources == {"VCPU": 2} and groups["1"].use_same_provider
    assert groups["1"].requester_id == "1"
    assert groups["_m"].resources == {"MEMORY_MB": 512}


def test_invalid_amounts_and_classes_are_ignored():
    request = from_request_spec(spec(extra={"resources:VCPU": "x", "resources:MEMORY_MB": "-1",
                                            "resources:lowercase": "1",
                                            "resources:DISK_GB": "7"}))
    assert request.unsuffixed.resources == {"VCPU": 4, "MEMORY_MB": 8192, "DISK_GB": 7}


def test_traits_required_forbidden_and_other_values_ignored():
    request = from_request_spec(spec(
        extra={"trait:HW_CPU_X86_AVX": "required", "trait:HW_CPU_X86_SSE": "forbidden",
               "trait:CUSTOM_X": "preferred", "resources7:VGPU": "1",
               "trait7:CUSTOM_G": "required"},
        image={"traits_required": ["CUSTOM_IMAGE"]}))
    query = dict(params(request))
    assert query["required"] == "CUSTOM_IMAGE,HW_CPU_X86_AVX,!HW_CPU_X86_SSE"
    assert query["required7"] == "CUSTOM_G"


@pytest.mark.parametrize(("extra", "policy"), [
    ({"resources1:VGPU": "1"}, None),
    ({"resources1:VGPU": "1", "resources2:VGPU": "1", "group_policy": "isolate"}, "isolate"),
    ({"resources1:VGPU": "1", "resources2:VGPU": "1", "group_policy": "bogus"}, None),
    ({"resources1:VGPU": "1", "resources2:VGPU": "1"}, None),
])
def test_group_policy_from_the_flavor(extra, policy):
    assert from_request_spec(spec(extra=extra)).group_policy == policy


def test_group_policy_defaults_to_none_when_at_most_one_group_is_the_flavors():
    s = spec(extra={"resources1:VGPU": "1"})
    s.requested_resources.append(RequestGroup(requester_id="port-a",
                                              resources={"NET_BW_EGR_KILOBIT_PER_SEC": 10}))
    assert from_request_spec(s).group_policy == "none"
    outside_only = spec()
    outside_only.requested_resources += [
        RequestGroup(requester_id="a", resources={"FPGA": 1}),
        RequestGroup(requester_id="b", resources={"FPGA": 1})]
    assert from_request_spec(outside_only).group_policy == "none"


def test_outside_groups_must_have_a_usable_unique_suffix():
    s = spec(extra={"resources1:VGPU": "1"})
    s.requested_resources.append(RequestGroup(requester_id="1", resources={"FPGA": 1}))
    with pytest.raises(ResourceRequestError, match="duplicate"):
        from_request_spec(s)
    s.requested_resources = [RequestGroup(requester_id="has space", resources={"FPGA": 1})]
    with pytest.raises(ResourceRequestError, match="not a valid group suffix"):
        from_request_spec(s)
    s.requested_resources = [RequestGroup(requester_id="empty")]
    with pytest.raises(ResourceRequestError, match="asks for nothing"):
        from_request_spec(s)


def test_mixed_policy_splits_vcpu_and_pcpu_and_emulator_thread_adds_one():
    request = from_request_spec(spec(extra={"hw:cpu_policy": "mixed",
                                            "hw:cpu_dedicated_mask": "^0-1"}))
    assert request.unsuffixed.resources["PCPU"] == 2
    assert request.unsuffixed.resources["VCPU"] == 2
    isolated = from_request_spec(spec(extra={"hw:cpu_policy": "dedicated",
                                             "hw:emulator_threads_policy": "isolate"}))
    assert isolated.unsuffixed.resources["PCPU"] == 5
    assert "VCPU" not in isolated.unsuffixed.resources


@pytest.mark.parametrize(("policy", "required", "forbidden"), [
    ("isolate", set(), {"HW_CPU_HYPERTHREADING"}),
    ("require", {"HW_CPU_HYPERTHREADING"}, set()),
    ("prefer", set(), set()),
])
def test_thread_policy_becomes_a_hyperthreading_trait_only_with_pinning(policy, required,
                                                                         forbidden):
    s = spec(extra={"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": policy})
    group = from_request_spec(s).unsuffixed
    assert (group.required_traits, group.forbidden_traits) == (required, forbidden)
    fallback = from_request_spec(s, translate_pinning=False).unsuffixed
    assert not fallback.required_traits and not fallback.forbidden_traits


def test_image_cpu_policy_also_pins_and_conflicts_are_errors():
    assert "PCPU" in from_request_spec(spec(image={"hw_cpu_policy": "dedicated"})
                                       ).unsuffixed.resources
    with pytest.raises(ScenarioError):
        from_request_spec(spec(extra={"hw:cpu_policy": "shared"},
                               image={"hw_cpu_policy": "dedicated"}))


def test_explicit_cpu_resources_win_over_pinning_translation():
    request = from_request_spec(spec(extra={"hw:cpu_policy": "dedicated",
                                            "resources:PCPU": "2"}))
    assert request.unsuffixed.resources["PCPU"] == 2
    assert not request.cpu_pinning_requested


def test_numa_and_page_size_reach_no_placement_parameter():
    plain = params(from_request_spec(spec()))
    assert params(from_request_spec(spec(extra={"hw:numa_nodes": "2",
                                                "hw:mem_page_size": "large"}))) == plain


def test_feature_traits_and_classes():
    request = from_request_spec(spec(
        extra={"hw:mem_encryption": "true", "hw:pmem": "small,small,big",
               "hw:tpm_version": "2.0", "hw:tpm_model": "tpm-crb",
               "hw:pci_numa_affinity_policy": "socket", "hw:maxphysaddr_mode": "emulate"},
        image={"os_secure_boot": "required", "hw_firmware_stateless": True}))
    group = request.unsuffixed
    assert group.resources["MEM_ENCRYPTION_CONTEXT"] == 1
    assert group.resources["CUSTOM_PMEM_NAMESPACE_SMALL"] == 2
    assert group.resources["CUSTOM_PMEM_NAMESPACE_BIG"] == 1
    assert group.required_traits == {
        "HW_CPU_X86_AMD_SEV", "COMPUTE_SECURITY_TPM_2_0", "COMPUTE_SECURITY_TPM_CRB",
        "COMPUTE_SOCKET_PCI_NUMA_AFFINITY", "COMPUTE_ADDRESS_SPACE_EMULATED",
        "COMPUTE_SECURITY_UEFI_SECURE_BOOT", "COMPUTE_SECURITY_STATELESS_FIRMWARE"}
    with pytest.raises(ResourceRequestError, match="vTPM version"):
        from_request_spec(spec(extra={"hw:tpm_version": "3"}))


def test_pci_aliases_become_one_group_per_device_only_with_pci_in_placement():
    pci = [PciRequest(count=2, spec=[{"vendor_id": "10de", "product_id": "20b5"}],
                      alias_name="a100", request_id="r1"),
           PciRequest(count=1, spec=[{"resource_class": "gpu.big", "traits": "fast,HW_X"}],
                      alias_name="big"),
           PciRequest(count=1, spec=[{"vendor_id": "8086"}])]  # a port: not translated
    s = spec(pci_requests=pci)
    assert list(from_request_spec(s).groups()) == [""]
    groups = from_request_spec(s, pci_in_placement=True, require_owner_nova=True).groups()
    assert groups["r1-0"].resources == {"CUSTOM_PCI_10DE_20B5": 1}
    assert groups["r1-1"].required_traits == {"OWNER_NOVA"}
    generated = pci[1].request_id
    assert generated and groups[f"{generated}-0"].resources == {"CUSTOM_GPU_BIG": 1}
    assert groups[f"{generated}-0"].required_traits == {"CUSTOM_FAST", "CUSTOM_HW_X",
                                                         "OWNER_NOVA"}
    assert from_request_spec(s, pci_in_placement=True).group_policy == "none"


def test_pci_alias_without_class_or_ids_or_with_several_specs_is_refused():
    with pytest.raises(ResourceRequestError, match="neither"):
        pci_request_groups([PciRequest(count=1, spec=[{"dev_type": "type-PF"}],
                                       alias_name="x")])
    with pytest.raises(ResourceRequestError, match="2 specs"):
        pci_request_groups([PciRequest(count=1, spec=[{"resource_class": "A"},
                                                      {"resource_class": "B"}],
                                       alias_name="x")])


def test_destination_aggregates_and_root_traits():
    s = spec(requested_destination=Destination(aggregates=["b,a", "c"],
                                               forbidden_aggregates={"z", "y"}))
    s.root_required |= {"COMPUTE_ACCELERATORS", "OWNER_NOVA"}
    s.root_forbidden.add("COMPUTE_STATUS_DISABLED")
    query = params(from_request_spec(s))
    assert [v for k, v in query if k == "member_of"] == ["!in:y,z", "in:a,b", "in:c"]
    assert dict(query)["root_required"] == (
        "COMPUTE_ACCELERATORS,OWNER_NOVA,!COMPUTE_STATUS_DISABLED")


def test_requested_node_becomes_in_tree_and_several_nodes_drop_limit():
    def one(host, node):
        assert (host, node) == ("cmp1", None)
        return ["c0ffee00-0000-4000-8000-000000000001"]

    s = spec(requested_destination=Destination(host="cmp1"))
    request = from_request_spec(s, compute_nodes=one)
    assert request.unsuffixed.in_tree == "c0ffee00-0000-4000-8000-000000000001"
    assert request.limit == 1000
    forced = spec(force_hosts=["cmp1"])
    several = from_request_spec(forced, compute_nodes=lambda h, n: ["a", "b"])
    assert several.limit is None and several.unsuffixed.in_tree is None
    assert "limit" not in dict(params(several))


@pytest.mark.parametrize("hint", ["group", "same_host", "different_host"])
def test_affinity_hints_drop_the_limit(hint):
    assert from_request_spec(spec(scheduler_hints={hint: ["x"]})).limit is None


def test_normalize_name():
    assert normalize_name("gpu.big") == "CUSTOM_GPU_BIG"
    assert normalize_name("HW_CPU_X86_AVX") == "HW_CPU_X86_AVX"
    assert normalize_name("CUSTOM_x") == "CUSTOM_X"
    assert normalize_name("fpga") == "FPGA"  # upper-cased first, then standard
    assert normalize_name("my fpga") == "CUSTOM_MY_FPGA"

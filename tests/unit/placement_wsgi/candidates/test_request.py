"""Query parsing of GET /allocation_candidates: values, errors, order."""

from __future__ import annotations

import urllib.parse

import pytest

from placement_wsgi import errors
from placement_wsgi.candidates.request import parse_query
from placement_wsgi.microversion import Version

AGG = "11111111-2222-3333-4444-555555555555"
AGG2 = "66666666-2222-3333-4444-555555555555"


def parse(query: str, version: str = "1.39"):
    major, minor = (int(part) for part in version.split("."))
    return parse_query(urllib.parse.parse_qsl(query, keep_blank_values=True),
                       Version(major, minor))


def error_of(query: str, version: str = "1.39") -> errors.PlacementError:
    with pytest.raises(errors.BadRequest) as caught:
        parse(query, version)
    return caught.value


def test_unsuffixed_group_with_everything() -> None:
    request = parse(f"resources=VCPU:1,MEMORY_MB:64&required=CUSTOM_A,!CUSTOM_B"
                    f"&member_of=in:{AGG},{AGG2}&in_tree={AGG}&limit=3", "1.31")
    (group,) = request.groups
    assert group.suffix == "" and not group.granular
    assert group.resources == {"VCPU": 1, "MEMORY_MB": 64}
    assert group.required.any_of == [frozenset(["CUSTOM_A"])]
    assert group.required.forbidden == {"CUSTOM_B"}
    assert group.member_of.any_of == [frozenset([AGG, AGG2])]
    assert group.in_tree == AGG
    assert request.limit == 3


def test_groups_keep_query_order_and_suffixes() -> None:
    request = parse("resources_B=VCPU:1&resources=DISK_GB:1&resources_A=VGPU:1"
                    "&group_policy=isolate")
    assert [group.suffix for group in request.groups] == ["_B", "", "_A"]
    assert request.isolate


def test_in_tree_is_stripped_and_canonical() -> None:
    request = parse(f"resources=VCPU:1&in_tree=%20{AGG.replace('-', '')}%20", "1.31")
    assert request.groups[0].in_tree == AGG


def test_last_resources_value_wins_but_every_value_is_checked() -> None:
    assert parse("resources=VCPU:1&resources=DISK_GB:2").groups[0].resources == {"DISK_GB": 2}
    assert "Got: bad." in error_of("resources=bad&resources=VCPU:1").message


def test_first_limit_and_group_policy_are_used() -> None:
    request = parse("resources1=VCPU:1&resources2=VCPU:1&limit=2&limit=5"
                    "&group_policy=none&group_policy=isolate", "1.25")
    assert request.limit == 2
    assert request.group_policy == "none"


def test_required_before_1_39_uses_last_value_only() -> None:
    request = parse("resources=VCPU:1&required=CUSTOM_A&required=CUSTOM_B", "1.38")
    assert request.groups[0].required.any_of == [frozenset(["CUSTOM_B"])]
    request = parse("resources=VCPU:1&required=CUSTOM_A&required=in:CUSTOM_B,CUSTOM_C")
    assert request.groups[0].required.any_of == [
        frozenset(["CUSTOM_A"]), frozenset(["CUSTOM_B", "CUSTOM_C"])]


def test_member_of_repeats_are_anded() -> None:
    request = parse(f"resources=VCPU:1&member_of={AGG}&member_of=!{AGG2}", "1.32")
    assert request.groups[0].member_of.any_of == [frozenset([AGG])]
    assert request.groups[0].member_of.forbidden == {AGG2}


def test_suffixed_member_of_messages_name_the_key() -> None:
    error = error_of(f"resources1=VCPU:1&member_of1=!{AGG}", "1.31")
    assert error.message == (
        "Forbidden member_of1 parameters are not supported in the specified microversion")
    error = error_of("resources1=VCPU:1&member_of1=nope", "1.31")
    assert error.message == ("Invalid query string parameters: Expected 'member_of' parameter "
                             "to contain valid UUID(s). Got: nope")


def test_multiple_member_of_before_1_24() -> None:
    error = error_of(f"resources=VCPU:1&member_of={AGG}&member_of={AGG2}", "1.23")
    assert error.message == "Multiple member_of parameters are not supported"


def test_bad_in_tree() -> None:
    error = error_of("resources=VCPU:1&in_tree=nope", "1.31")
    assert error.message == ("Invalid query string parameters: Expected 'in_tree' parameter "
                             "to be a format of uuid. Got: nope")


# -- request-wide parameters ----------------------------------------------------------


def test_root_required_once_only() -> None:
    error = error_of("resources=VCPU:1&root_required=CUSTOM_A&root_required=CUSTOM_B")
    assert error.message == "Query parameter 'root_required' may be specified only once."
    assert error.code == errors.QUERY_DUPLICATE_KEY


def test_root_required_parsed_and_conflicts() -> None:
    request = parse("resources=VCPU:1&root_required=CUSTOM_A,!CUSTOM_B", "1.35")
    assert request.root_required.required == {"CUSTOM_A"}
    assert request.root_required.forbidden == {"CUSTOM_B"}
    error = error_of("resources=VCPU:1&root_required=CUSTOM_B,!CUSTOM_B,CUSTOM_A,!CUSTOM_A")
    assert error.message == ("Conflicting required and forbidden traits found in "
                             "root_required: CUSTOM_A, CUSTOM_B")
    assert error.code == errors.QUERY_BAD_VALUE


def test_root_required_never_takes_in_form() -> None:
    error = error_of("resources=VCPU:1&root_required=in:CUSTOM_A,CUSTOM_B", "1.39")
    assert "only supported since microversion 1.39. Got: in:CUSTOM_A,CUSTOM_B" in error.message


def test_root_required_checked_before_groups() -> None:
    error = error_of("resources=bad&root_required=CUSTOM_A&root_required=CUSTOM_A")
    assert error.code == errors.QUERY_DUPLICATE_KEY


def test_same_subtree_values() -> None:
    request = parse("resources_A=VCPU:1&resources_B=VCPU:1&group_policy=none"
                    "&same_subtree=_A,%20_B&same_subtree=_B")
    assert request.same_subtrees == [frozenset(["_A", "_B"]), frozenset(["_B"])]
    error = error_of("resources_A=VCPU:1&same_subtree=_A,")
    assert error.message == (
        "Empty string (unsuffixed group) can not be specified in `same_subtree` ")
    assert error.code == errors.QUERY_BAD_VALUE


# -- group structure ---------------------------------------------------------------------


def test_orphaned_traits_listed_in_query_order() -> None:
    error = error_of("required=CUSTOM_A&resources2=VCPU:1&required1=CUSTOM_B"
                     "&group_policy=none", "1.35")
    assert error.message == ("All traits parameters must be associated with resources.  "
                             "Found the following orphaned traits keys: required, required1")


def test_orphaned_member_of() -> None:
    error = error_of(f"resources=VCPU:1&member_of3={AGG}", "1.35")
    assert error.message == ("All member_of parameters must be associated with resources. "
                             "Found the following orphaned member_of keys: member_of3")


def test_forbidden_only_group_without_resources() -> None:
    error = error_of("resources=VCPU:1&required1=!CUSTOM_A", "1.35")
    assert error.message == "All request groups must specify resources."
    error = error_of(f"resources=VCPU:1&in_tree1={AGG}", "1.35")
    assert error.message == "All request groups must specify resources."


def test_no_group_at_all() -> None:
    error = error_of("group_policy=none", "1.25")
    assert error.message == (
        "At least one request group (`resources` or `resources{$S}`) is required.")


def test_resourceless_rules_from_1_36() -> None:
    error = error_of("required_A=CUSTOM_A")
    assert error.message == "There must be at least one resources or resources[$S] parameter."
    assert error.code == errors.QUERY_MISSING_VALUE
    error = error_of("resources=VCPU:1&required_B=CUSTOM_A&required=CUSTOM_B&required_A=X"
                     "&group_policy=none")
    assert error.message == (
        "Resourceless suffixed group request should be specified in `same_subtree` query "
        "param: bad group(s) - ['_A', '_B'].")
    error = error_of("resources_A=VCPU:1&required_B=CUSTOM_A&group_policy=none"
                     "&same_subtree=_A,_B,_C")
    assert error.message == ("Real suffixes should be specified in `same_subtree`: ['_C'] "
                             "not found in ['_A', '_B'].")
    assert error.code == errors.QUERY_BAD_VALUE


def test_resourceless_unsuffixed_group_is_listed_as_empty_string() -> None:
    error = error_of("resources_A=VCPU:1&required=CUSTOM_A&same_subtree=_A")
    assert "bad group(s) - ['']." in error.message


def test_resourceless_group_in_same_subtree_is_fine() -> None:
    request = parse("resources_A=VCPU:1&required_B=CUSTOM_A&group_policy=none"
                    "&same_subtree=_A,_B")
    assert [group.resources for group in request.groups] == [{"VCPU": 1}, {}]


def test_trait_conflicts_from_1_22() -> None:
    error = error_of("resources=VCPU:1&required=CUSTOM_A,!CUSTOM_A&resources1=VCPU:1"
                     "&required1=in:CUSTOM_B,CUSTOM_C&required1=!CUSTOM_B,!CUSTOM_C"
                     "&group_policy=none")
    assert error.message == (
        "Conflicting required and forbidden traits found in the following traits keys: "
        "required1: (CUSTOM_B, CUSTOM_C), required: (CUSTOM_A)")
    # an any-of set with a permitted member is fine
    parse("resources=VCPU:1&required=in:CUSTOM_B,CUSTOM_C&required=!CUSTOM_B")


def test_group_policy_required_with_two_suffixed_groups() -> None:
    message = ('The "group_policy" parameter is required when specifying more than one '
               '"resources{N}" parameter.')
    assert error_of("resources1=VCPU:1&resources2=VCPU:1", "1.25").message == message
    # resourceless suffixed groups count too
    error = error_of("resources_A=VCPU:1&required_B=CUSTOM_A&same_subtree=_A,_B")
    assert error.message == message
    parse("resources=VCPU:1&resources1=VCPU:1", "1.25")


def test_structure_checked_before_group_policy() -> None:
    error = error_of("resources1=VCPU:1&required2=CUSTOM_A", "1.25")
    assert error.message.startswith("All traits parameters must be associated")


def test_first_limit_must_be_valid_too() -> None:
    error = error_of("resources=VCPU:1&limit=x&limit=2")
    assert error.message == "Invalid query string parameters: 'x' does not match '^[1-9][0-9]*$'"

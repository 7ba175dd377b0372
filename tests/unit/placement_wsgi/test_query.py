"""The shared query grammar (placement_wsgi/query.py): parsed
values and every 400 message, at the microversion boundaries."""

from __future__ import annotations

import pytest

from placement_wsgi import errors, query
from placement_wsgi.microversion import Version

A = "11111111-1111-1111-1111-111111111111"
B = "22222222-2222-2222-2222-222222222222"
FORM = ("Badly formed resources parameter. Expected resources query string parameter in "
        "form: ?resources=VCPU:2,MEMORY_MB:1024. Got: ")


def _bad(function, *args) -> str:
    with pytest.raises(errors.BadRequest) as raised:
        function(*args)
    return str(raised.value)


# -- resources ---------------------------------------------------------------------


def test_resources_parse_to_amounts_with_the_last_repeat_winning():
    assert query.parse_resources("VCPU:2,MEMORY_MB:1024,VCPU:3") == {
        "VCPU": 3, "MEMORY_MB": 1024}


def test_resources_amounts_may_have_spaces_but_names_are_kept_verbatim():
    assert query.parse_resources("VCPU: 2 , DISK_GB:1") == {"VCPU": 2, " DISK_GB": 1}


@pytest.mark.parametrize("value", ["", "   "])
def test_resources_empty(value):
    assert _bad(query.parse_resources, value) == FORM + "empty string."


@pytest.mark.parametrize("value, item", [
    ("VCPU", "VCPU"), ("VCPU:1,DISK_GB", "DISK_GB"), ("VCPU:1:2", "VCPU:1:2"),
    ("VCPU:1,", ""),
])
def test_resources_items_need_exactly_one_colon(value, item):
    assert _bad(query.parse_resources, value) == f"{FORM}{item}."


def test_resources_amount_must_be_an_integer():
    assert _bad(query.parse_resources, "VCPU:1.5") == (
        "Requested resource VCPU expected positive integer amount. Got: 1.5.")


@pytest.mark.parametrize("amount", ["0", "-3"])
def test_resources_amount_must_be_positive(amount):
    assert _bad(query.parse_resources, f"DISK_GB:{amount}") == (
        f"Requested resource DISK_GB requires amount >= 1. Got: {int(amount)}.")


def test_resources_items_are_checked_in_order():
    assert "Got: x." in _bad(query.parse_resources, "VCPU:x,DISK_GB")


# -- required ------------------------------------------------------------------------

V118, V121, V122, V138, V139 = (Version(1, n) for n in (18, 21, 22, 38, 39))
INVALID = "Invalid query string parameters: "


def test_required_plain_traits_are_single_member_sets():
    parsed = query.parse_required(["A, B"], V118)
    assert parsed.any_of == [frozenset({"A"}), frozenset({"B"})]
    assert parsed.forbidden == set()
    assert parsed.required == {"A", "B"}
    assert parsed.names == {"A", "B"}


def test_required_forbidden_traits_from_122_with_leading_marks_stripped():
    parsed = query.parse_required(["A,!B,!!C"], V122)
    assert parsed.any_of == [frozenset({"A"})]
    assert parsed.forbidden == {"B", "C"}
    assert parsed.names == {"A", "B", "C"}


def test_required_forbidden_before_122():
    assert _bad(query.parse_required, ["A,!B"], V121) == (
        f"{INVALID}Expected 'required' parameter value of the form: "
        "HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: A,!B")


@pytest.mark.parametrize("version, form", [
    (V121, "HW_CPU_X86_VMX,CUSTOM_MAGIC"), (V122, "HW_CPU_X86_VMX,!CUSTOM_MAGIC")])
@pytest.mark.parametrize("value", ["", "A,,B", "A,!", " , A"])
def test_required_empty_traits(version, form, value):
    assert _bad(query.parse_required, [value], version) == (
        f"{INVALID}Expected 'required' parameter value of the form: {form}. "
        f"Got an empty trait in: {value}")


def test_required_empty_trait_is_reported_before_an_early_forbidden_one():
    assert "Got an empty trait in: !A,," in _bad(query.parse_required, ["!A,,"], V121)


def test_required_before_139_only_the_last_value_counts():
    parsed = query.parse_required(["", "in:bad", "B"], V138)
    assert parsed.any_of == [frozenset({"B"})]


def test_required_from_139_repeats_are_anded():
    parsed = query.parse_required(["in:A,B", "C,!D", "in: E "], V139)
    assert parsed.any_of == [frozenset({"A", "B"}), frozenset({"C"}), frozenset({"E"})]
    assert parsed.forbidden == {"D"}
    assert parsed.required == {"C", "E"}
    assert parsed.names == {"A", "B", "C", "D", "E"}


def test_required_any_of_before_139():
    assert _bad(query.parse_required, ["in:A,B"], V138) == (
        f"{INVALID}The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
        "microversion 1.39. Got: in:A,B")


@pytest.mark.parametrize("value", ["in:", "in:A,", "in:A,,B"])
def test_required_any_of_empty_traits(value):
    assert _bad(query.parse_required, [value], V139) == (
        f"{INVALID}Expected 'required' parameter value of the form: "
        f"in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: {value}")


def test_required_any_of_rejects_forbidden_traits():
    assert _bad(query.parse_required, ["in:A,!B"], V139) == (
        f"{INVALID}The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support "
        "forbidden traits. Got: in:A,!B")


def test_required_error_names_the_suffixed_key():
    assert "Expected 'required7' parameter" in _bad(
        query.parse_required, ["A,,"], V139, "required7")


def test_trait_filter_truthiness():
    assert not query.TraitFilter()
    assert query.parse_required(["!A"], V122)


# -- member_of -----------------------------------------------------------------------

V13, V123, V124, V131, V132 = (Version(1, n) for n in (3, 23, 24, 31, 32))


def test_member_of_single_and_any_of():
    parsed = query.parse_member_of([f"in:{A},{B}"], V13)
    assert parsed.any_of == [frozenset({A, B})]
    assert query.parse_member_of([A], V13).any_of == [frozenset({A})]


def test_member_of_repeats_from_124_are_anded():
    parsed = query.parse_member_of([A, f"in:{A},{B}"], V124)
    assert parsed.any_of == [frozenset({A}), frozenset({A, B})]


def test_member_of_repeats_before_124():
    assert _bad(query.parse_member_of, ["bad", "worse"], V123) == (
        "Multiple member_of parameters are not supported")


def test_member_of_several_ids_need_the_in_prefix():
    assert _bad(query.parse_member_of, [f"{A},{B}"], V132) == (
        "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' "
        f"keyword using the valid microversion. Got: {A},{B}")


@pytest.mark.parametrize("value, bad", [
    ("", ""), ("nope", "nope"), (f"in:{A},!{B}", f"!{B}"), (f"in:{A},", ""), ("!x", "x")])
def test_member_of_ids_must_be_uuids(value, bad):
    assert _bad(query.parse_member_of, [value], V131) == (
        f"{INVALID}Expected 'member_of' parameter to contain valid UUID(s). Got: {bad}")


def test_member_of_accepts_lenient_uuids_verbatim():
    lenient = A.replace("-", "").upper()
    assert query.parse_member_of([lenient], V13).any_of == [frozenset({lenient})]


@pytest.mark.parametrize("value", [f"!{A}", f"!in:{A},{B}"])
def test_member_of_forbidden_before_132(value):
    assert _bad(query.parse_member_of, [value], V131) == (
        "Forbidden member_of parameters are not supported in the specified microversion")


def test_member_of_forbidden_ids_are_unioned():
    parsed = query.parse_member_of([f"!{A}", f"!in:{A},{B}", A], V132)
    assert parsed.forbidden == {A, B}
    assert parsed.any_of == [frozenset({A})]
    assert parsed


def test_aggregate_filter_truthiness():
    assert not query.AggregateFilter()

"""extra_specs_ops.match: every operator with nova's exact semantics."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.extra_specs_ops import compile_requirement, match


@pytest.mark.parametrize(("value", "requirement", "expected"), [
    # no operator: exact comparison with the whole requirement string
    ("foo", "foo", True),
    ("foo", " foo", False),
    ("true", "True", False),
    ("foo", "bar", False),
    # "=" is numeric >=
    ("10", "= 8", True),
    ("8", "= 8", True),
    ("7", "= 8", False),
    ("8.5", "= 8", True),
    # numeric operators
    ("8", "== 8.0", True),
    ("9", "== 8", False),
    ("9", "!= 8", True),
    ("8", "!= 8", False),
    ("8", ">= 8", True),
    ("7", ">= 8", False),
    ("8", "<= 8", True),
    ("9", "<= 8", False),
    # string operators
    ("foo", "s== foo", True),
    ("foo", "s== bar", False),
    ("foo", "s!= bar", True),
    ("foo", "s!= foo", False),
    ("10", "s> 9", False),
    ("b", "s> a", True),
    ("b", "s>= b", True),
    ("a", "s>= b", False),
    ("a", "s< b", True),
    ("b", "s< b", False),
    ("b", "s<= b", True),
    ("c", "s<= b", False),
    # only the first operand word is used
    ("foo", "s== foo bar", True),
    # <in> is a substring test
    ("avx2", "<in> avx", True),
    ("sse", "<in> avx", False),
    # <all-in>: every word is a substring
    ("['sse', 'avx2']", "<all-in> sse avx", True),
    ("['sse']", "<all-in> sse avx", False),
    # <or> takes every second word after the operator
    ("a", "<or> a b c", True),
    ("c", "<or> a b c", True),
    ("b", "<or> a b c", False),
    ("icelake", "<or> icelake <or> zen", True),
    ("zen", "<or> icelake <or> zen", True),
    ("skylake", "<or> icelake <or> zen", False),
    # an operator without operand is False
    ("8", "=", False),
    ("foo", "<in>", False),
    ("foo", "s==", False),
])
def test_match(value, requirement, expected):
    assert match(value, requirement) is expected


@pytest.mark.parametrize("requirement", ["= 8", "== 1", "s== a", "<in> a", "<all-in> a",
                                         "<or> a", "<or>", ">= 1"])
def test_none_value_with_a_recognised_operator_is_false(requirement):
    assert match(None, requirement) is False


def test_none_value_without_operator_compares_exactly():
    assert match(None, "foo") is False


@pytest.mark.parametrize("requirement", ["= 8", "== 8", "!= 8", ">= 8", "<= 8"])
def test_numeric_operator_on_non_number_raises_value_error(requirement):
    with pytest.raises(ValueError):
        match("big", requirement)


def test_numeric_operator_with_non_numeric_operand_raises():
    with pytest.raises(ValueError):
        match("8", ">= lots")


def test_bare_or_raises_index_error():
    with pytest.raises(IndexError):
        match("a", "<or>")


def test_compiled_matcher_is_reusable():
    matcher = compile_requirement("<or> a <or> b")
    assert [matcher(v) for v in ("a", "b", "c")] == [True, True, False]

"""Placement's two UUID spellings: lenient for bodies and paths, strict for queries."""

from __future__ import annotations

import pytest

from placement_wsgi.uuids import canonical_uuid, is_lenient_uuid, is_strict_uuid

HYPHENATED = "5a3a0a58-0c4b-4b5e-9c3a-3f0a6d6c1d2e"


@pytest.mark.parametrize("value", [HYPHENATED, HYPHENATED.replace("-", ""),
                                   HYPHENATED.upper(), "{" + HYPHENATED + "}",
                                   "urn:uuid:" + HYPHENATED])
def test_lenient_accepts_what_python_parses_with_the_same_digits(value):
    assert is_lenient_uuid(value)
    assert canonical_uuid(value) == HYPHENATED


@pytest.mark.parametrize("value", ["", "nope", HYPHENATED[:-1], HYPHENATED + "0", None, 42,
                                   "5a3a0a58-0c4b-4b5e-9c3a-3f0a6d6c1d2x"])
def test_lenient_refuses_the_rest(value):
    assert not is_lenient_uuid(value)


def test_strict_needs_the_hyphens_in_place():
    assert is_strict_uuid(HYPHENATED) and is_strict_uuid(HYPHENATED.upper())
    assert not is_strict_uuid(HYPHENATED.replace("-", ""))
    assert not is_strict_uuid("{" + HYPHENATED + "}")
    assert not is_strict_uuid("5a3a0a580-c4b-4b5e-9c3a-3f0a6d6c1d2e")

"""The host description's JSON Schema and its patterns (virt/host_schema.py)."""

from __future__ import annotations

import re

import jsonschema
import pytest

from nova_reshape.virt import host_schema

VALIDATOR = jsonschema.Draft202012Validator(host_schema.HOST_SCHEMA)


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(host_schema.HOST_SCHEMA)


@pytest.mark.parametrize(("pattern", "good", "bad"), [
    (host_schema.PCI_ADDRESS, ["0000:84:00.0", "0000:AF:1f.7"], ["84:00.0", "0000:84:00.8"]),
    (host_schema.CPUSET_STRING, ["0-7,16-23", "0-7,^3", " 4 "], ["0-", "a-b", "1;2"]),
    (host_schema.TAG_NAME, ["nvidia_11", "A100"], ["nvidia-11", ""]),
])
def test_patterns(pattern, good, bad):
    assert all(re.match(pattern, text) for text in good)
    assert not any(re.match(pattern, text) for text in bad)


def test_a_minimal_description_and_what_it_must_have():
    assert VALIDATOR.is_valid({"version": 1, "nodes": [{"nodename": "cmp-07"}]})
    assert not VALIDATOR.is_valid({"nodes": [{}]})  # a node needs its nodename
    assert not VALIDATOR.is_valid({"nodes": []})
    assert not VALIDATOR.is_valid({"version": 2, "nodes": [{"nodename": "cmp-07"}]})
    assert not VALIDATOR.is_valid({"nodes": [{"nodename": "cmp-07"}], "extra": 1})
    assert not VALIDATOR.is_valid({"nodes": [{"nodename": "cmp-07", "uuid": "nope"}]})

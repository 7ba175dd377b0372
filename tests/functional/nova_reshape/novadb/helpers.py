"""Run describe_hosts and check its files against the host description schema.

The schema is extended here, in a copy, with the fields agreed for the
format's next version (node ``disabled``, ``cpu_shared_set``,
``cpu_dedicated_set``; consumer ``cpu_policy``) so the rest of each file is
still validated by the real schema while those fields are pending.
"""

from __future__ import annotations

import copy
import io
import json
import os

import jsonschema

from nova_reshape.cmd import manage
from nova_reshape.virt import host_schema
from nova_reshape.virt.host import read_yaml

PENDING_NODE_FIELDS = {
    "disabled": {"type": "boolean"},
    "cpu_shared_set": {"type": "string", "pattern": host_schema.CPUSET_STRING},
    "cpu_dedicated_set": {"type": "string", "pattern": host_schema.CPUSET_STRING},
}
PENDING_CONSUMER_FIELDS = {"cpu_policy": {"enum": ["dedicated"]}}


def extended_schema() -> dict:
    schema = copy.deepcopy(host_schema.HOST_SCHEMA)
    node = schema["properties"]["nodes"]["items"]
    for name, rule in PENDING_NODE_FIELDS.items():
        node["properties"].setdefault(name, rule)
    consumer = node["properties"]["consumers"]["items"]
    for name, rule in PENDING_CONSUMER_FIELDS.items():
        consumer["properties"].setdefault(name, rule)
    return schema


VALIDATOR = jsonschema.Draft202012Validator(extended_schema())


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def load_output(directory: str) -> dict[str, dict]:
    """Every written file by host; each validated against the (extended) schema."""
    documents = {}
    for name in sorted(os.listdir(directory)):
        document = read_yaml(os.path.join(directory, name))
        # JSON Schema wants string keys (huge_pages sizes are ints in YAML).
        VALIDATOR.validate(json.loads(json.dumps(document)))
        documents[document["host"]] = document
    return documents


def header(path: str) -> list[str]:
    with open(path, encoding="utf-8") as stream:
        return [line.rstrip("\n") for line in stream if line.startswith("#")]

"""The field readers every nova object parser shares (novadb/envelope.py)."""

from __future__ import annotations

import pytest

from nova_reshape.nova.errors import ObjectFormatError
from nova_reshape.novadb import envelope
from nova_reshape.novadb.envelope import VersionedObject


def test_version_tuple_reads_major_minor_and_refuses_anything_else():
    assert envelope.version_tuple("1.5") == (1, 5)
    assert envelope.version_tuple("2") == (2, 0)
    with pytest.raises(ObjectFormatError, match="bad object version 'one.two'"):
        envelope.version_tuple("one.two")


def test_unwrap_keeps_plain_documents_and_refuses_data_that_is_no_mapping():
    assert envelope.unwrap({"a": [1, {"b": None}]}) == {"a": [1, {"b": None}]}
    bare = envelope.unwrap({envelope.NAME: "Flavor"})
    assert bare == VersionedObject("Flavor", (1, 0), {})
    with pytest.raises(ObjectFormatError, match="Flavor: nova_object.data is not a mapping"):
        envelope.unwrap({envelope.NAME: "Flavor", envelope.DATA: [1]})


def test_load_json_leaves_empty_columns_none_and_names_bad_ones():
    assert envelope.load_json(None, "stats") is None
    assert envelope.load_json("", "stats") is None
    assert envelope.load_json(b'{"a": 1}', "stats") == {"a": 1}
    with pytest.raises(ObjectFormatError, match="^stats is not JSON"):
        envelope.load_json("{", "stats")


def test_expect_checks_the_object_name():
    flavor = VersionedObject("Flavor", (1, 2), {})
    assert envelope.expect(flavor, "Flavor") is flavor
    with pytest.raises(ObjectFormatError, match="expected a NUMACell object, found Flavor"):
        envelope.expect(flavor, "NUMACell")
    with pytest.raises(ObjectFormatError, match="expected a NUMACell object, found dict"):
        envelope.expect({}, "NUMACell")


def test_cpu_sets_from_lists_and_from_nova_cpuset_syntax():
    assert envelope.int_set(None, "cpuset") == frozenset()
    assert envelope.int_set(["1", 2], "cpuset") == {1, 2}
    with pytest.raises(ObjectFormatError, match="cpuset is not a list"):
        envelope.int_set("1,2", "cpuset")
    with pytest.raises(ObjectFormatError, match="cpuset holds a value that is not a number"):
        envelope.int_set(["x"], "cpuset")
    assert envelope.cpu_spec("0-3,^2", "vcpu_pin_set") == {0, 1, 3}
    assert envelope.cpu_spec(None, "vcpu_pin_set") == frozenset()
    with pytest.raises(ObjectFormatError, match="^vcpu_pin_set: "):
        envelope.cpu_spec("0-x", "vcpu_pin_set")


def test_required_field():
    assert envelope.required({"id": 0}, "id", "NUMACell") == 0
    with pytest.raises(ObjectFormatError, match="NUMACell has no id"):
        envelope.required({"id": None}, "id", "NUMACell")

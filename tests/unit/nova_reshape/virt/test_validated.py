"""A host document the schema passed in one pass of a run is not validated again."""

from __future__ import annotations

import datetime

import pytest

from nova_reshape.cmd.manage import HostStream
from nova_reshape.virt import host
from nova_reshape.virt.host import HostDescriptionError, iter_hosts
from nova_reshape.virt.validated import ValidatedDocuments


@pytest.fixture
def validations(monkeypatch):
    """Counts the schema passes (host._validate calls)."""
    calls: list[str] = []
    real = host._validate

    def counted(document, path):
        calls.append(path)
        real(document, path)

    monkeypatch.setattr(host, "_validate", counted)
    return calls


@pytest.fixture
def files(tmp_path):
    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"host: cmp-{name}\nnodes:\n- nodename: cmp-{name}\n  gpus:\n"
                        "  - {address: '0000:84:00.0', capacity: 4}\n", encoding="utf-8")
        paths.append(str(path))
    return paths


def test_each_pass_of_a_stream_validates_only_new_documents(files, validations):
    stream = HostStream(tuple(files))
    first = [h.host for h in stream]
    second = [h.host for h in stream]
    assert first == second == ["cmp-a", "cmp-b"]
    assert validations == files  # once per file, in the first pass only


def test_without_the_set_every_read_validates(files, validations):
    list(iter_hosts(files))
    list(iter_hosts(files))
    assert validations == files + files


def test_a_file_changed_between_passes_is_validated_and_refused_as_before(files, validations):
    validated = ValidatedDocuments()
    list(iter_hosts(files, validated))
    with open(files[1], "a", encoding="utf-8") as stream:
        stream.write("colour: blue\n")
    with pytest.raises(HostDescriptionError) as again:
        list(iter_hosts(files, validated))
    with pytest.raises(HostDescriptionError) as fresh:
        list(iter_hosts(files))
    assert str(again.value) == str(fresh.value)
    assert "colour" in str(again.value)


def test_a_document_not_json_shaped_is_validated_every_time():
    validated = ValidatedDocuments()
    seen = []
    for _ in range(2):
        validated.once({"when": datetime.date(2024, 1, 2)}, seen.append)
    assert len(seen) == 2 and len(validated) == 0


def test_a_failed_validation_is_not_remembered():
    validated = ValidatedDocuments()

    def refuse(document):
        raise ValueError("bad")

    for _ in range(2):
        with pytest.raises(ValueError):
            validated.once({"a": 1}, refuse)
    assert len(validated) == 0


def test_equal_data_of_other_types_is_not_taken_for_validated():
    validated = ValidatedDocuments()
    seen = []
    for document in ({"a": 1}, {"a": 1.0}, {"a": True}, {"a": "1"}, {"a": 1}):
        validated.once(document, seen.append)
    assert seen == [{"a": 1}, {"a": 1.0}, {"a": True}, {"a": "1"}]

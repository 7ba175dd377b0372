"""Host description files: header, YAML and the atomic write (hostfacts/output.py)."""

from __future__ import annotations

import os

import pytest
import yaml

from nova_reshape.hostfacts import output


def test_header_names_sources_and_notes_only_when_there_are_some():
    assert output.header("cmp-1", ["nova database"], []) == \
        "# cmp-1\n# Sources:\n#   nova database\n"
    assert output.header("cmp-1", ["a", "b"], ["no nova.conf"]).endswith(
        "#   b\n# Notes:\n#   no nova.conf\n")


def test_yaml_keeps_the_key_order_and_is_block_style():
    text = output.render({"nodes": [{"nodename": "n", "gpus": []}], "host": "h"}, "# c\n")
    assert text == "# c\nnodes:\n- nodename: n\n  gpus: []\nhost: h\n"
    assert yaml.safe_load(text) == {"nodes": [{"nodename": "n", "gpus": []}], "host": "h"}


def test_write_atomically_replaces_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "cmp-1.yaml"
    path.write_text("old")
    output.write_atomically(str(path), "new\n")
    assert path.read_text() == "new\n" and os.listdir(tmp_path) == ["cmp-1.yaml"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "cmp-1.yaml"
    path.write_text("old")
    with pytest.raises(TypeError):
        output.write_atomically(str(path), None)  # type: ignore[arg-type]
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["cmp-1.yaml"]


def test_file_name_cannot_escape_the_directory():
    assert output.file_name("cmp-1") == "cmp-1.yaml"
    assert output.file_name("../etc/x") == ".._etc_x.yaml"

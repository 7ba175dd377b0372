"""Errors of nova's vocabulary: ValueErrors whose one-line message a command prints."""

from __future__ import annotations

import pytest

from nova_reshape.nova.conf.compute import load_nova_conf
from nova_reshape.nova.errors import NovaConfError, ObjectFormatError
from nova_reshape.novadb.devices import parse_pci_requests


@pytest.mark.parametrize("error", [NovaConfError, ObjectFormatError])
def test_both_are_value_errors(error):
    assert issubclass(error, ValueError)


def test_a_value_nova_would_refuse_in_nova_conf(tmp_path):
    path = tmp_path / "nova.conf"
    path.write_text("[DEFAULT]\nreserved_host_cpus = -1\n")
    with pytest.raises(NovaConfError) as error:
        load_nova_conf([str(path)])
    assert "reserved_host_cpus" in str(error.value) and "\n" not in str(error.value)


def test_an_object_nova_would_not_load():
    with pytest.raises(ObjectFormatError, match="not a list of requests"):
        parse_pci_requests('"nope"')

"""The host files' YAML loader gives what PyYAML's constructor gives, errors included."""

from __future__ import annotations

import datetime

import pytest
import yaml
from yaml.constructor import BaseConstructor

from nova_reshape.virt.yaml_loader import Loader

from .test_host import _example


class _PyYamlBuilt(Loader):
    """The same resolvers, every document built by PyYAML's constructor."""

    construct_document = BaseConstructor.construct_document


def _both(text: str) -> tuple[object, object]:
    return yaml.load(text, Loader=Loader), yaml.load(text, Loader=_PyYamlBuilt)  # noqa: S506


def _typed(value: object) -> object:
    """``value`` with every scalar's type spelled out (1 == 1.0 == True otherwise)."""
    if isinstance(value, dict):
        return [(_typed(key), _typed(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, repr(value))


PLAIN = [
    _example(),
    "a: 1\nb: -0x1F\nc: 1_000\nd: 2.5\ne: .inf\nf: ~\ng: yes\nh: 'x'\ni: 0000:84:00.0\n",
    "- [1, 2.0, three]\n- {x: null, 2048: 16, 3.5: true}\n- ''\n",
    "a: 1\na: 2\nb: [1]\n",
    "12:30\n",
    "[]\n",
]

NOT_PLAIN = [
    "base: &b {x: 1, y: 2}\nder:\n  <<: *b\n  y: 3\n",
    "a: &l [1, 2]\nb: *l\n",
    "when: 2024-01-02\nset: !!set {a, b}\nbin: !!binary aGk=\n",
    "pairs: !!omap [{a: 1}, {b: 2}]\n",
    "= : value\n",
    "big: !!int 1:30\n",
]


@pytest.mark.parametrize("text", PLAIN + NOT_PLAIN)
def test_same_data_as_pyyaml(text):
    built, reference = _both(text)
    assert _typed(built) == _typed(reference)


@pytest.mark.parametrize("text", PLAIN)
def test_plain_data_is_built_without_pyyaml_constructor(text, monkeypatch):
    def refuse(self, node):
        raise AssertionError("PyYAML's constructor was used")

    monkeypatch.setattr(BaseConstructor, "construct_document", refuse)
    yaml.load(text, Loader=Loader)  # noqa: S506


def test_an_alias_gives_the_same_object_twice():
    data = yaml.load("a: &l [1, 2]\nb: *l\n", Loader=Loader)  # noqa: S506
    assert data["a"] is data["b"]


def test_a_recursive_alias_is_built_as_pyyaml_builds_it():
    data = yaml.load("a: &r [1, *r]\n", Loader=Loader)  # noqa: S506
    assert data["a"][1] is data["a"]


def test_tags_of_other_types_are_pyyamls():
    data = yaml.load("when: 2024-01-02\n", Loader=Loader)  # noqa: S506
    assert data == {"when": datetime.date(2024, 1, 2)}


@pytest.mark.parametrize("text", [
    "a: !!bool maybe\n",
    "a: !!int twelve\n",
    "a: !unknown 1\n",
    "a: !!python/object:os.system x\n",
    "? [1, 2]\n: x\n",
])
def test_errors_are_pyyamls(text):
    with pytest.raises(Exception) as ours:
        yaml.load(text, Loader=Loader)  # noqa: S506
    with pytest.raises(Exception) as theirs:
        yaml.load(text, Loader=_PyYamlBuilt)  # noqa: S506
    assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))

"""The YAML loader of host description files (:mod:`nova_reshape.virt.host`).

:class:`Loader` is the safe loader (libyaml's parser when PyYAML has it)
minus YAML 1.1's base-60 numbers, so that an unquoted PCI address such as
``0000:00:02.0`` stays a string instead of becoming the integer 2: the
int and float resolvers are replaced by ones without the ``:`` forms.

Building the Python objects is PyYAML's constructor, written in Python
whichever parser runs: a generator per mapping and sequence, a memo of
every node, the merge-key pass over every mapping. A host file is plain
data (mappings, sequences, strings, numbers, booleans, nulls), and for that
:meth:`Loader.construct_document` builds the objects directly, in about a
third of the time. Anything else (another tag, a merge key ``<<``, a
mapping or sequence used twice through an alias, a key that is not a
plain scalar, any error) is built by PyYAML's constructor from the start,
so what a document gives, or the error it raises, is PyYAML's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _NotPlain(Exception):
    """The document is not plain data: PyYAML's constructor builds it."""


class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML loader (libyaml's when built in) without base-60 ints and floats."""

    def construct_document(self, node: Node) -> Any:
        """The document's data: built directly when it is plain data, else by
        PyYAML's constructor (module docstring)."""
        scalars: dict[str, Callable[[ScalarNode], Any]] = {
            _STR: _value, _INT: self.construct_yaml_int, _FLOAT: self.construct_yaml_float,
            "tag:yaml.org,2002:bool": self.construct_yaml_bool,
            "tag:yaml.org,2002:null": self.construct_yaml_null}
        try:
            return _build(node, scalars, set())
        except Exception:  # noqa: BLE001 (anything unusual: PyYAML's own path decides)
            return super().construct_document(node)


def _value(node: ScalarNode) -> str:
    return node.value


def _build(node: Node, scalars: dict[str, Callable[[ScalarNode], Any]], seen: set[int]) -> Any:
    """``node`` as Python data; _NotPlain when it is not plain data."""
    kind = type(node)
    if kind is ScalarNode:
        construct = scalars.get(node.tag)
        if construct is None:
            raise _NotPlain()
        return construct(node)
    if id(node) in seen:
        raise _NotPlain()  # an alias: PyYAML gives the same object twice
    seen.add(id(node))
    if kind is MappingNode and node.tag == _MAP:
        mapping = {}
        for key_node, value_node in node.value:
            if type(key_node) is not ScalarNode or key_node.tag not in scalars:
                raise _NotPlain()  # a merge key, a "=" key, a collection as key
            mapping[scalars[key_node.tag](key_node)] = _build(value_node, scalars, seen)
        return mapping
    if kind is SequenceNode and node.tag == _SEQ:
        return [_build(item, scalars, seen) for item in node.value]
    raise _NotPlain()


Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
Loader.add_implicit_resolver(
    _INT, re.compile(r"^(?:[-+]?(?:0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+)$"), list("-+0123456789"))
Loader.add_implicit_resolver(
    _FLOAT, re.compile(r"^(?:[-+]?(?:[0-9][0-9_]*)?\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
                       r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), list("-+0123456789."))

"""Host aggregates as nova's API database keeps them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Aggregate:
    """A host aggregate: service host names and string metadata."""

    name: str
    hosts: frozenset[str]
    metadata: Mapping[str, str]
    uuid: str | None = None

"""Host description documents that already passed the schema in this run.

A migration reads every host file more than once (the nodes the
consistency check covers, then the run itself, and the scheduling check's
preview when it runs) and does not keep them between passes. The schema
pass was the larger part of reading one (jsonschema: about 0.7 CPU-ms per
file of 4 GPUs and 16 instances, against about 0.3 for the YAML; a valid
file now costs a third of that, ``host_schema.certainly_valid``),
and its outcome
depends on the document's data alone: a document equal to one that passed
passes. :class:`ValidatedDocuments` remembers a 16-byte digest of the JSON
text of each document that passed, so later passes skip the schema for
those. A document that cannot be written as JSON (a date, a set) is
validated every time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any


class ValidatedDocuments:
    """Digests of the documents that passed the schema, for one run's passes."""

    def __init__(self) -> None:
        self._digests: set[bytes] = set()

    @staticmethod
    def _digest(document: Any) -> bytes | None:
        try:
            text = json.dumps(document, ensure_ascii=False)
        except (TypeError, ValueError):
            return None
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def once(self, document: Any, validate: Callable[[Any], None]) -> None:
        """``validate(document)`` (which raises for a bad one) unless an equal
        document passed it before; remember it when it passes."""
        digest = self._digest(document)
        if digest is not None and digest in self._digests:
            return
        validate(document)
        if digest is not None:
            self._digests.add(digest)

    def __len__(self) -> int:
        return len(self._digests)

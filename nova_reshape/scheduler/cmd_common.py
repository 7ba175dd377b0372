"""What both explain modes read from the command line: a JSON file (or stdin)."""

from __future__ import annotations

import json
import sys

from nova_reshape.scheduler.errors import ScenarioError


def read_json(path: str) -> object:
    """The parsed JSON of ``path`` (``-``: stdin); ScenarioError when unreadable."""
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except OSError as exc:
        raise ScenarioError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ScenarioError(f"{path} is not valid JSON: {exc}") from exc

"""Validate a body or query against a request schema the way the handlers do."""

from __future__ import annotations

from typing import Any

from placement_wsgi import errors, util


def accepts(schema: dict, data: Any, query: bool = False) -> bool:
    """Whether ``util.validate`` lets ``data`` through ``schema`` (else it raised a 400)."""
    try:
        util.validate(data, schema, "", query=query)
    except errors.BadRequest:
        return False
    return True

"""PCI addresses as nova writes and compares them."""

from __future__ import annotations


def canonical_address(address: str) -> str:
    """PCI addresses compare lower-cased (``0000:D8:00.0`` == ``0000:d8:00.0``)."""
    return address.lower()

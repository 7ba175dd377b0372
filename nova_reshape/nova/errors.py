"""Errors of nova's vocabulary: a value nova itself would refuse.

Each is a ``ValueError`` whose message is one line naming the file, option
or value, so a command can print it as it is.
"""

from __future__ import annotations


class NovaConfError(ValueError):
    """nova.conf could not be read or holds a value nova would refuse."""

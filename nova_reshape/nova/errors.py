"""Errors of nova's vocabulary: a value nova itself would refuse.

Each is a ``ValueError`` whose message is one line naming the file, option
or value, so a command can print it as it is.
"""

from __future__ import annotations


class NovaConfError(ValueError):
    """nova.conf could not be read or holds a value nova would refuse."""


class ObjectFormatError(ValueError):
    """A nova object (a serialized versioned object, a flavor's extra spec) is not
    what nova's own code would accept."""

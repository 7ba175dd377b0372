"""The commands' log records on stderr, one line each.

An operator reads a command's stderr: every record is one line, and an
exception a library logs with it (SQLAlchemy's pool, resetting a
connection the database dropped, logs an ERROR with its traceback) is
given as its type and message, never as a traceback.
"""

from __future__ import annotations

import logging
from typing import TextIO

FORMAT = "%(levelname)s %(name)s: %(message)s"


class OneLineFormatter(logging.Formatter):
    """:data:`FORMAT`, with a record's exception as ``(Type: message)`` on the same line."""

    def format(self, record: logging.LogRecord) -> str:
        plain = logging.makeLogRecord({**record.__dict__, "exc_info": None,
                                       "exc_text": None, "stack_info": None})
        line = super().format(plain)
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:
            line += f" ({type(error).__name__}: {' '.join(str(error).split())})"
        return line


def configure(err: TextIO, level: int) -> None:
    """Send the root logger's records to ``err``, one line each, from ``level`` up
    (nothing changes when the root logger already has a handler)."""
    handler = logging.StreamHandler(err)
    handler.setFormatter(OneLineFormatter(FORMAT))
    logging.basicConfig(handlers=[handler], level=level)

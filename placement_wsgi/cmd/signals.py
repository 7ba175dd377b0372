"""SIGINT and SIGTERM stop a long command the way Ctrl-C does, and its exit status.

``systemctl stop``, a CI timeout or ``kill`` send SIGTERM, which by default
ends a Python process at once, with no word and whatever it was doing cut.
Inside :func:`interruptible` both signals raise :class:`Interrupted` (a
``KeyboardInterrupt``) in the main thread instead, so the command unwinds:
an open database transaction rolls back (each write the commands make is one
transaction: a signal leaves it whole or absent), worker processes are told
to stop, and the command prints its one line.

The exit status of an interrupted command is the shell's for a process a
signal ended (:func:`exit_status`): 130 after SIGINT, 143 after SIGTERM.
This module is its one home; every command (``placement-manage``,
``nova-reshape-manage``, ``nova-reshape-scheduler``) uses it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

#: The signals that stop a command cleanly.
STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The command was asked to stop by ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_of(error: KeyboardInterrupt) -> int:
    """The signal behind ``error``: its own, or SIGINT for a plain Ctrl-C."""
    return getattr(error, "signum", signal.SIGINT)


def signal_name(error: KeyboardInterrupt) -> str:
    """``SIGINT`` or ``SIGTERM``, for the command's line."""
    return signal.Signals(signal_of(error)).name


def exit_status(error: KeyboardInterrupt) -> int:
    """The shell's status for a process ``error``'s signal ended: 128 + its number."""
    return 128 + signal_of(error)


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within: SIGINT and SIGTERM raise :class:`Interrupted` in the main thread.

    The previous handlers come back on leaving. Outside the main thread (a
    test calling ``main()`` from a thread) nothing is installed: Python only
    lets the main thread set handlers.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raise_interrupted)
                for signum in STOPPING_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class Deferral:
    """A signal held by :func:`deferred`: falsy until one arrives."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def __bool__(self) -> bool:
        return self.signum is not None

    def hold(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum


@contextlib.contextmanager
def deferred() -> Iterator[Deferral]:
    """Within: a signal that would interrupt (inside :func:`interruptible`) is held
    instead, so work that commits and then reports (a migration's write) is not
    cut between the two; the work asks the yielded :class:`Deferral` at its safe
    points and stops there. On leaving normally, a held signal raises
    :class:`Interrupted`, so the command ends as if it had come then.

    Where signals do not interrupt (outside :func:`interruptible`, a worker
    process under :func:`defer_to`, a thread) nothing is changed and the
    deferral never fires.
    """
    deferral = Deferral()
    if (threading.current_thread() is not threading.main_thread()
            or any(signal.getsignal(signum) is not _raise_interrupted
                   for signum in STOPPING_SIGNALS)):
        yield deferral
        return
    previous = {signum: signal.signal(signum, deferral.hold) for signum in STOPPING_SIGNALS}
    try:
        yield deferral
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if deferral.signum is not None:
        raise Interrupted(deferral.signum)


def defer_to(callback: Callable[[], None]) -> None:
    """In a worker process: SIGINT and SIGTERM call ``callback`` (which asks the
    work to stop at its next safe point) instead of interrupting it."""
    def handler(_signum: int, _frame: FrameType | None) -> None:
        callback()

    for signum in STOPPING_SIGNALS:
        signal.signal(signum, handler)


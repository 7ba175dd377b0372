"""SIGINT and SIGTERM as an exception the command unwinds from, and their exit status."""

from __future__ import annotations

import signal

import pytest

from placement_wsgi.cmd import signals


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_inside_interruptible_a_signal_raises_and_the_old_handler_comes_back(signum, status):
    before = signal.getsignal(signum)
    with pytest.raises(signals.Interrupted) as raised, signals.interruptible():
        signal.raise_signal(signum)
    assert signals.exit_status(raised.value) == status
    assert signals.signal_name(raised.value) == signal.Signals(signum).name
    assert signal.getsignal(signum) is before


def test_a_plain_ctrl_c_is_sigint():
    assert signals.exit_status(KeyboardInterrupt()) == 130
    assert signals.signal_name(KeyboardInterrupt()) == "SIGINT"


def test_a_worker_defers_the_signal_to_its_stop_callback():
    previous = {signum: signal.getsignal(signum) for signum in signals.STOPPING_SIGNALS}
    asked = []
    try:
        signals.defer_to(lambda: asked.append(True))
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    assert asked == [True, True]


def test_a_deferred_signal_is_held_until_the_work_leaves_then_raised():
    seen = []
    with pytest.raises(signals.Interrupted) as raised, signals.interruptible():
        with signals.deferred() as signalled:
            seen.append(bool(signalled))
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGINT)  # the first one is what stops the command
            seen.append(bool(signalled))  # still here: the work stops at its safe point
        seen.append("not reached")
    assert seen == [False, True]
    assert raised.value.signum == signal.SIGTERM


def test_after_a_deferral_signals_interrupt_at_once_again():
    with pytest.raises(signals.Interrupted), signals.interruptible():
        with signals.deferred():
            pass
        signal.raise_signal(signal.SIGINT)


def test_outside_interruptible_nothing_is_deferred():
    previous = {signum: signal.getsignal(signum) for signum in signals.STOPPING_SIGNALS}
    asked = []
    try:
        signals.defer_to(lambda: asked.append(True))  # as in a worker process
        with signals.deferred() as signalled:
            signal.raise_signal(signal.SIGTERM)
        assert not signalled and asked == [True]
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

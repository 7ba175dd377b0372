"""The migration's progress bars: shown on a terminal or when forced, quiet otherwise."""

from __future__ import annotations

import io

from nova_reshape.progress import PhaseBars, progress_callback


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_quiet_for_json_and_for_a_non_terminal():
    assert progress_callback(io.StringIO(), "text") is None
    assert progress_callback(_Terminal(), "json") is None
    assert isinstance(progress_callback(_Terminal(), "text"), PhaseBars)
    assert isinstance(progress_callback(io.StringIO(), "json", force=True), PhaseBars)


def test_bars_show_done_total_phase_rate_and_eta():
    stream = io.StringIO()
    progress = PhaseBars(stream)
    for done in range(1, 5):
        progress("check", done, 4)
    for done in range(1, 3):
        progress("migrate", done, 2)
    text = stream.getvalue()
    assert "4/4 nodes check" in text and "2/2 nodes migrate" in text
    assert "100%" in text and "nodes/s" in text and "<" in text  # elapsed<remaining, rate
    assert progress.bar is None  # each bar closed once its phase was complete


def test_a_phase_whose_total_grows_keeps_one_bar():
    stream = io.StringIO()
    progress = PhaseBars(stream)
    progress("migrate", 1, 3)
    bar = progress.bar
    progress("migrate", 2, 5)
    assert progress.bar is bar and bar.total == 5 and bar.n == 2
    progress("migrate", 5, 5)
    assert "5/5 nodes migrate" in stream.getvalue()

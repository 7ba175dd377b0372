"""Every refusal's exit class has one exit status, in one table."""

from __future__ import annotations

import pytest

from nova_reshape.cmd import refusal
from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.compute.preflight import Finding
from nova_reshape.novadb.readonly import BadDatabaseURL, DatabaseReadError


@pytest.mark.parametrize(("exit_class", "code"), [
    (ExitClass.FAILED, 1), (ExitClass.BAD_INPUT, 2), (ExitClass.REFUSED, 3)])
def test_each_class_maps_to_its_documented_exit_status(exit_class, code):
    assert Refusal(exit_class, "why").exit_code == code == refusal.EXIT_CODES[exit_class]


def test_the_table_covers_every_class():
    assert set(refusal.EXIT_CODES) == set(ExitClass)


def test_a_refusal_carries_its_line_and_findings():
    finding = Finding("source_conflict", "cmp-1", "disagree")
    stop = Refusal(ExitClass.REFUSED, "1 conflict(s)", [finding])
    assert (str(stop), stop.message, stop.findings) == ("1 conflict(s)", "1 conflict(s)",
                                                        [finding])


def test_a_bad_database_url_is_bad_input_an_unreadable_database_a_failure():
    assert refusal.database_refusal(BadDatabaseURL("no driver")).exit_code == 2
    unreadable = refusal.database_refusal(DatabaseReadError("gone"))
    assert (unreadable.exit_class, unreadable.message) == (ExitClass.FAILED, "gone")

"""Findings: their line, their fix and the table of failure classes they name."""

import pytest

from nova_reshape.compute.findings import FAILURE_CLASSES, Finding


@pytest.mark.parametrize("code", sorted(FAILURE_CLASSES))
def test_every_failure_class_says_what_it_means_and_how_to_fix_it(code):
    meaning, fix = FAILURE_CLASSES[code]
    assert meaning.strip() and fix.strip()


def test_the_line_names_node_class_consumer_provider_and_fix():
    finding = Finding("orphaned_allocation", "cmp-1", "nobody in nova holds it",
                      consumer="c-1", provider="p-1")
    assert str(finding) == (
        "cmp-1: [orphaned_allocation] nobody in nova holds it (consumer c-1, provider p-1). "
        f"Fix: {FAILURE_CLASSES['orphaned_allocation'][1]}.")


def test_a_command_ends_the_line_bare_so_that_it_can_be_copied():
    finding = Finding("missing_allocation", "cmp-1", "no allocations",
                      command="nova-reshape-manage placement heal_allocations")
    assert str(finding).endswith(": nova-reshape-manage placement heal_allocations")
    assert finding.as_dict()["command"] == "nova-reshape-manage placement heal_allocations"
    assert finding.as_dict()["fix"] == finding.fix

"""The HTML report in headless Chromium: no console error, filter by host, expand a node.

Debian's ``chromium`` is installed by the set-up when missing
(:func:`tests.fixtures.chromium.chromium_binary`); the test is skipped, with
the reason, only where it cannot be. The screenshot of the expanded node is
kept under ``.artifacts/`` (git-ignored) and its path printed.
"""

from __future__ import annotations

import time

import pytest

from nova_reshape.cmd import manage
from tests.fixtures import chromium
from tests.functional.nova_reshape.runreport.conftest import copy_artifact, main


@pytest.fixture(scope="module")
def browser_binary() -> str:
    binary = chromium.chromium_binary()
    if binary is None:
        pytest.skip("; ".join(chromium.UNAVAILABLE))
    return binary


def _until(browser: chromium.Browser, expression: str, seconds: float = 10) -> object:
    deadline = time.monotonic() + seconds
    while True:
        value = browser.evaluate(expression)
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_report_in_chromium(deployment, tmp_path, browser_binary, artifacts, engine):
    path = str(tmp_path / "run.html")
    code, text = main(*deployment.command("--report", path))
    assert code == manage.EXIT_OK, text
    with chromium.Browser(browser_binary) as browser:
        browser.open(path)
        assert browser.evaluate("document.querySelectorAll('details.node').length") == 4
        assert browser.evaluate("document.getElementById('f-shown').textContent") == "4"
        browser.evaluate("var f = document.getElementById('f-host'); f.value = 'CMP-0001';"
                         "f.dispatchEvent(new Event('input'))")
        assert _until(browser, "document.getElementById('f-shown').textContent === '1'")
        assert browser.evaluate(
            "Array.from(document.querySelectorAll('details.node')).filter(n => !n.hidden)"
            ".map(n => n.dataset.host)") == ["cmp-0001"]
        assert browser.evaluate("document.querySelectorAll('svg.tree').length") == 0
        browser.evaluate("document.getElementById('node-cmp-0001').open = true")
        assert _until(browser, "document.querySelectorAll('#node-cmp-0001 svg.tree')"
                               ".length === 2")
        texts = browser.evaluate("Array.from(document.querySelectorAll("
                                 "'#node-cmp-0001 svg.tree text')).map(t => t.textContent)")
        assert "cmp-0001_pci_0000_84_00_0" in texts and "cmp-0001-fpga-0" in texts
        assert browser.evaluate("document.querySelectorAll('#node-cmp-0001 td').length") > 0
        browser.evaluate("document.getElementById('f-kind').value = 'disabled';"
                         "document.getElementById('f-host').value = '';"
                         "document.getElementById('f-kind').dispatchEvent(new Event('change'))")
        assert browser.evaluate("Array.from(document.querySelectorAll('details.node'))"
                                ".filter(n => !n.hidden).map(n => n.dataset.host)") == [
                                    "cmp-0000"]
        browser.evaluate("document.getElementById('f-kind').value = '';"
                         "var f = document.getElementById('f-host'); f.value = 'cmp-0001';"
                         "f.dispatchEvent(new Event('input'))")
        _until(browser, "document.getElementById('f-shown').textContent === '1'")
        browser.evaluate("document.getElementById('node-cmp-0001').scrollIntoView()")
        shot = browser.screenshot(str(tmp_path / "report.png"))
        assert browser.errors == []
    kept = copy_artifact(shot, artifacts, f"report-browser-{engine}.png")
    print(f"screenshot: {kept}")

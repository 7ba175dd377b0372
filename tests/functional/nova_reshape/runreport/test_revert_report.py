"""``placement revert --report FILE.html|FILE.json``: what the page and the document show.

A mixed cloud migrated in-process, one node changed since (refused), then
reverted with a report: the nodes reverted, the refused one with its one
line, each node's tree before and after the revert in outline; a second
revert finds them already back. The page is read as HTML (its elements,
not its text layout), and opened in headless Chromium where available.
"""

from __future__ import annotations

import html.parser
import json

import pytest

from nova_reshape.cmd import manage
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import chromium
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape import migrate_helpers as helpers
from tests.functional.nova_reshape.journal import test_revert as reverts


class Page(html.parser.HTMLParser):
    """Each ``details.node`` of the page: its data attributes, its summary's text and
    the items of its before and after lists; and the counts table's rows."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.nodes: dict[str, dict] = {}
        self.counts: dict[str, str] = {}
        self._node: dict | None = None
        self._into: str | None = None
        self._row: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if tag == "details" and "node" in found.get("class", ""):
            self._node = {"status": found["data-status"], "summary": "", "before": [],
                          "after": []}
            self.nodes[found["id"].removeprefix("node-")] = self._node
        elif tag == "summary" and self._node is not None:
            self._into = "summary"
        elif tag == "ul" and self._node is not None:
            self._into = found["class"]
        elif tag == "li" and self._into in ("before", "after"):
            self._node[self._into].append("")
        elif tag == "tr" and "data-status" in found:
            self._row = found["data-status"]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("summary", "ul"):
            self._into = None
        elif tag == "details":
            self._node = None

    def handle_data(self, data: str) -> None:
        if self._into == "summary":
            self._node["summary"] += data
        elif self._into in ("before", "after") and self._node[self._into]:
            self._node[self._into][-1] += data
        elif self._row is not None and data.strip().isdigit():
            self.counts[self._row] = data.strip()
            self._row = None


@pytest.fixture
def reverted(db_url, tmp_path):
    """The migrated cloud with cmp-0001 changed since, reverted with an HTML report:
    (conf, run id, the revert's JSON output, the page)."""
    conf, _before, run_id = reverts._migrated(db_url, tmp_path)
    consumer = reverts._consumer_of("cmp-0001")
    with PlacementDirect(make_conf(db_url)) as placement:
        body = helpers.ok(placement.get(f"/allocations/{consumer}", microversion="1.28"))
        helpers.ok(placement.put(f"/allocations/{consumer}", microversion="1.28", json={
            **body, "allocations": {rp: {"resources": entry["resources"]}
                                    for rp, entry in body["allocations"].items()}}))
    page = tmp_path / "revert.html"
    code, report = reverts._revert(conf, run_id, "--report", str(page))
    assert code == manage.EXIT_REFUSED
    return conf, run_id, report, page


def test_the_page_shows_each_node_its_outcome_and_its_trees(reverted):
    _conf, run_id, report, path = reverted
    text = path.read_text(encoding="utf-8")
    page = Page(text)
    assert f"placement revert {run_id}" in text and report["revert_run"] in text
    assert page.counts == {"reverted": "2", "refused": "1"}
    assert {name: node["status"] for name, node in page.nodes.items()} == {
        "cmp-0000": "reverted", "cmp-0001": "refused", "cmp-0002": "reverted"}
    [refused] = [node for node in report["nodes"] if node["status"] == "refused"]
    assert refused["reason"] in page.nodes["cmp-0001"]["summary"]
    assert page.nodes["cmp-0001"]["after"] == ["unchanged: nothing written"]
    for name in ("cmp-0000", "cmp-0002"):
        node = page.nodes[name]
        assert len(node["before"]) == 9 and len(node["after"]) == 1  # children gone
        assert node["after"][0].startswith(f"{name}: ") and "VGPU" in node["after"][0]
        assert any(line.startswith(f"{name}_pci_") and "VGPU" in line
                   for line in node["before"])
    exit_code = text.split('id="exit-code">', 1)[1].split("<", 1)[0]
    assert exit_code == str(manage.EXIT_REFUSED)


def test_the_json_document_of_a_second_revert(reverted, tmp_path):
    conf, run_id, _report, _page = reverted
    path = tmp_path / "again.json"
    code, _ = reverts._revert(conf, run_id, "--host", "cmp-0000", "--report", str(path))
    assert code == 0
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["report"] == "revert" and document["run"]["run"] == run_id
    assert document["run"]["exit_code"] == 0 and document["counts"] == {"already-reverted": 1}
    [node] = document["nodes"]
    assert node["nodename"] == "cmp-0000" and node["status"] == "already-reverted"
    assert node["after"] == [] and len(node["before"]) == 1


def test_a_report_in_a_missing_directory_is_refused_first(reverted, tmp_path):
    conf, run_id, _report, _page = reverted
    code, text, err = reverts._main("--config-file", conf, "placement", "revert", run_id,
                                    "--report", str(tmp_path / "nowhere" / "r.html"))
    assert (code, text) == (manage.EXIT_BAD_INPUT, "") and err.count("\n") == 1
    assert "does not exist" in err


def test_the_page_in_chromium(reverted):
    binary = chromium.chromium_binary()
    if binary is None:
        pytest.skip("; ".join(chromium.UNAVAILABLE))
    _conf, _run_id, _report, path = reverted
    with chromium.Browser(binary) as browser:
        browser.open(str(path))
        assert browser.evaluate("document.querySelectorAll('details.node').length") == 3
        browser.evaluate("document.getElementById('node-cmp-0000').open = true")
        assert browser.evaluate("document.querySelectorAll('#node-cmp-0000 ul.after li')"
                                ".length") == 1
        assert browser.errors == []

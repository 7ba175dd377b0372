"""``--report`` on a mixed run, parsed: counts, every node, capacity equal to the database's.

The deployment has VGPUs, PCI devices, pinned guests (PCPU), a Cyborg FPGA,
a disabled host and an ironic node; a dry run with a host whose node
Placement lacks is refused. The HTML is read with a real parser
(html.parser), the JSON report checked against its schema.
"""

from __future__ import annotations

import html.parser
import json
import os

import jsonschema

from nova_reshape.cmd import manage
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape import migrate_helpers as helpers
from tests.functional.nova_reshape.runreport.conftest import REFUSED, main

FIELDS = ("total", "reserved", "capacity", "used")


class Report(html.parser.HTMLParser):
    """What the tests read from the HTML: nodes, counts, capacity cells, refusals."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.nodes: dict[str, dict[str, str]] = {}
        self.counts: dict[str, int] = {}
        self.capacity: dict[tuple[str, str], dict[str, float]] = {}
        self.marks: dict[str, str] = {}
        self.refusals: list[list[str]] = []
        self.ids: set[str] = set()
        self._stack: list[tuple[str, dict[str, str]]] = []
        self._cells: list[str] = []
        self._row: dict[str, str] | None = None
        self._group = ""
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = {name: value or "" for name, value in attrs}
        self._stack.append((tag, attrs))
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "details" and "node" in attrs.get("class", ""):
            self.nodes[attrs["data-host"]] = attrs
        if tag == "tr":
            self._row, self._cells = attrs, []
        if tag == "tr" and "data-class" in attrs:
            self._group = attrs["data-class"]
            self.capacity[(attrs["data-class"], attrs["data-when"])] = {}

    def handle_endtag(self, tag):
        opened = self._stack.pop() if self._stack else ("", {})
        if tag == "tr" and self._row is not None:
            if "data-status" in self._row and self._cells:
                self.counts[self._row["data-status"]] = int(self._cells[1])
            if self._inside("refusals") and self._cells and self._cells[0] != "node":
                self.refusals.append(self._cells)
            self._row = None
        del opened

    def _inside(self, section_id: str) -> bool:
        return any(attrs.get("id") == section_id for _, attrs in self._stack)

    def handle_data(self, data):
        if self._row is None or not self._stack:
            return
        tag, attrs = self._stack[-1]
        if tag in ("td", "th", "a", "span"):
            self._cells.append(data.strip())
        classes = attrs.get("class", "").split()
        if "data-class" in self._row and tag == "td" and "n" in classes:
            key = (self._row["data-class"], self._row["data-when"])
            field = next(name for name in FIELDS if name in classes)
            self.capacity[key][field] = float(data)
        if tag == "span" and "mark" in classes:
            self.marks[self._group] = data.strip()


def database_sums(db_url: str, skip_roots: set[str]) -> dict[str, dict[str, float]]:
    """class group -> total, reserved, capacity, used over every provider in Placement
    but the ironic nodes' (read through the API, summed here)."""
    sums: dict[str, dict[str, float]] = {}
    with PlacementDirect(make_conf(db_url)) as placement:
        providers = helpers.ok(placement.get("/resource_providers", microversion="1.14"))
        for provider in providers["resource_providers"]:
            if provider["root_provider_uuid"] in skip_roots:
                continue
            uuid = provider["uuid"]
            inventories = helpers.ok(placement.get(
                f"/resource_providers/{uuid}/inventories"))["inventories"]
            usages = helpers.ok(placement.get(f"/resource_providers/{uuid}/usages"))["usages"]
            for rc, record in inventories.items():
                group = "VCPU+PCPU" if rc in ("VCPU", "PCPU") else rc
                row = sums.setdefault(group, dict.fromkeys(FIELDS, 0.0))
                row["total"] += record["total"]
                row["reserved"] += record["reserved"]
                row["capacity"] += ((record["total"] - record["reserved"])
                                    * record["allocation_ratio"])
                row["used"] += usages.get(rc, 0)
    return sums


def _read(path: str) -> Report:
    with open(path, encoding="utf-8") as stream:
        return Report(stream.read())


def _report_sums(report: Report, when: str) -> dict[str, dict[str, float]]:
    return {group: cells for (group, at), cells in report.capacity.items()
            if at == when and any(cells.values())}


def test_dry_run_refused_node_report(deployment, tmp_path):
    deployment.add_refused_host()
    path = str(tmp_path / "dry.html")
    code, text = main(*deployment.command("--dry-run", "--report", path))
    assert code == manage.EXIT_REFUSED, text
    report = _read(path)
    assert set(report.nodes) == {*deployment.nodes, REFUSED}
    assert report.nodes[REFUSED]["data-status"] == "refused"
    assert report.counts == {"refused": 1, "not-run": 3, "skipped": 1}
    assert report.nodes["cmp-0000"]["data-kinds"].split() == [
        "cyborg", "pci", "pcpu", "vgpu", "disabled"]
    ((node, reason, fix),) = report.refusals
    assert node == REFUSED and "[node_not_found]" in reason and fix
    assert {"summary", "capacity", "refusals", "nodes"} <= report.ids
    assert "scheduling" not in report.ids  # no check ran: no table, no placeholder data
    # nothing written: after equals before for every class
    assert _report_sums(report, "after") == _report_sums(report, "before")


def test_run_report_numbers_are_the_databases(deployment, tmp_path):
    skip = set(deployment.ironic.values())
    before = database_sums(deployment.db_url, skip)
    path = str(tmp_path / "run.html")
    code, text = main(*deployment.command("--report", path))
    assert code == manage.EXIT_OK, text
    after = database_sums(deployment.db_url, skip)
    report = _read(path)
    assert set(report.nodes) == set(deployment.nodes)
    assert report.counts == {"migrated": 3, "skipped": 1}
    assert _report_sums(report, "before") == {g: s for g, s in before.items()}
    assert _report_sums(report, "after") == after
    assert {"VGPU", "VCPU+PCPU", "MEMORY_MB", "DISK_GB", "FPGA", "CUSTOM_FAST_NIC",
            "CUSTOM_PCI_10DE_20B5"} <= set(report.marks)
    assert report.marks["VGPU"] == report.marks["MEMORY_MB"] == "conserved"
    assert report.marks["FPGA"] == "conserved"
    assert report.marks["CUSTOM_PCI_10DE_20B5"] == "new"
    assert before["VCPU+PCPU"]["used"] == after["VCPU+PCPU"]["used"]


def test_json_report_schema(deployment, tmp_path):
    path = str(tmp_path / "run.json")
    code, text = main(*deployment.command("--report", path, "--workers", "2",
                                          "--format", "json"))
    assert code == manage.EXIT_OK, text
    # the output's own detail is back in place beside the report's
    printed = json.loads(text)
    assert all(node["before"] for node in printed["nodes"] if node["status"] == "migrated")
    with open(path, encoding="utf-8") as stream:
        document = json.load(stream)
    with open(os.path.join(os.path.dirname(__file__), "report.schema.json"),
              encoding="utf-8") as stream:
        jsonschema.validate(document, json.load(stream))
    assert sorted(node["node"] for node in document["nodes"]) == deployment.nodes
    after = database_sums(deployment.db_url, set(deployment.ironic.values()))
    assert {row["group"]: {field: row["after"][field] for field in FIELDS}
            for row in document["capacity"]} == after

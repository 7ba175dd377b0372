"""The writers: autoescaped HTML in chunks with their JSON, one streamed JSON document."""

from __future__ import annotations

import base64
import gzip
import html.parser
import io
import json

from nova_reshape.runreport import writers

RUN = {"target": "nova 34", "dry_run": True, "inputs": [["host file", "<hosts>"]],
       "started": "now"}
NODE = {"node": "cmp-<1>", "status": "refused", "kinds": ["vgpu"], "disabled": True,
        "moves": 0, "reason": "bad </script> & co", "findings": [], "violations": [],
        "after_is": "none", "drawing": {"text": "</script><b>x</b>"}}
CLOSING = {"outcome": {"exit_code": 3, "exit_class": "refused", "verdict": "refused",
                       "seconds": 1.5},
           "summary": {"nodes": 1, "read": 0,
                       "counts": [{"status": "refused", "nodes": 1, "exit_code": 3}]},
           "capacity": [], "refusals": [], "scheduling": None}


class Collect(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.data, self.scripts = [], [], []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        (self.scripts if self._in_script else self.data).append(data)


def _html(closing=CLOSING):
    stream = io.StringIO()
    writer = writers.writer_for("report.HTML", stream)
    writer.start(RUN)
    writer.nodes(0, [NODE])
    writer.end(closing)
    parser = Collect()
    parser.feed(stream.getvalue())
    return stream.getvalue(), parser


def test_html_escapes_every_value_and_keeps_the_json_inside_its_script():
    text, parser = _html()
    assert "<hosts>" not in text and "&lt;hosts&gt;" in text
    assert "cmp-<1>" not in text and "bad </script>" not in text
    (node,) = [attrs for tag, attrs in parser.tags if tag == "details"]
    assert node["data-host"] == "cmp-<1>" and node["data-kinds"] == "vgpu disabled"
    assert (node["data-c"], node["data-k"]) == ("0", "0")
    (chunk,) = [attrs for tag, attrs in parser.tags if attrs.get("id") == "chunk-0"]
    assert chunk["type"] == "text/plain" and chunk["data-encoding"] == "gzip base64 json"
    assert json.loads(gzip.decompress(base64.b64decode(parser.scripts[0]))) == [
        NODE["drawing"]]
    assert "bad </script> & co" in "".join(parser.data)


def test_html_is_self_contained_and_shows_the_scheduling_table_only_when_given():
    text, parser = _html()
    assert not [attrs for tag, attrs in parser.tags
                if attrs.get("src") or (tag == "link" and attrs.get("href"))]
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text
    assert not [attrs for tag, attrs in parser.tags if attrs.get("id") == "scheduling"]
    table = {"columns": ["flavor", "hosts"], "rows": [["m1.<gpu>", 3]]}
    text, parser = _html({**CLOSING, "scheduling": table})
    assert [attrs for tag, attrs in parser.tags if attrs.get("id") == "scheduling"]
    assert "m1.&lt;gpu&gt;" in text
    assert text.rstrip().endswith("</html>")


def test_json_is_one_document_streamed():
    stream = io.StringIO()
    writer = writers.writer_for("report.json", stream)
    writer.start(RUN)
    writer.nodes(0, [NODE])
    writer.nodes(1, [NODE, NODE])
    writer.end(CLOSING)
    document = json.loads(stream.getvalue())
    assert document["report"] == "migrate_compute_inventory"
    assert document["run"] == RUN and document["nodes"] == [NODE] * 3
    assert {key: document[key] for key in CLOSING} == CLOSING

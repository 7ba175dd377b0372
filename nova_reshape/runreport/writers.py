"""The report files, written in three steps: the start, a chunk per batch of nodes, the end.

Both writers take the same calls, so the run does not care which format
it writes: :meth:`start` once with the run's facts, :meth:`nodes` for
each batch of finished nodes (their entries, see
:func:`~nova_reshape.runreport.records.entry`), :meth:`end` once with the
summary, capacity rows, refusals and the scheduling table. Nothing is
kept between calls, so the writer's memory is one batch.

HTML: Jinja2 templates with autoescaping (``templates/``); each batch
is its rows plus one ``<script type="text/plain">`` holding the nodes'
drawings as JSON, gzip-compressed and base64-encoded (a tenth of the
file's size at 10,000 nodes, and text the browser only scans), which the
page's script decodes only when a node of the batch is expanded. The
sections known only at the end (summary, capacity, refusals) come last
in the file and are shown first by CSS.
JSON: one document, the nodes streamed into its ``nodes`` list.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TextIO

import jinja2

from nova_reshape.compute.node_result import NodeStatus

#: The kinds a node can be filtered by (records.kinds_of, plus a disabled host).
KINDS = ("vgpu", "pci", "pcpu", "cyborg", "numa", "disabled")

_ENVIRONMENT: jinja2.Environment | None = None


def environment() -> jinja2.Environment:
    """The templates shipped with the package, autoescaped, compact JSON."""
    global _ENVIRONMENT
    if _ENVIRONMENT is None:
        _ENVIRONMENT = jinja2.Environment(
            loader=jinja2.PackageLoader("nova_reshape.runreport", "templates"),
            autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
        _ENVIRONMENT.policies["json.dumps_kwargs"] = {"sort_keys": False,
                                                      "separators": (",", ":")}
    return _ENVIRONMENT


class ReportWriter(Protocol):
    def start(self, run: Mapping[str, Any]) -> None: ...

    def nodes(self, chunk: int, entries: Sequence[Mapping[str, Any]]) -> None: ...

    def end(self, closing: Mapping[str, Any]) -> None: ...


class HtmlWriter:
    """One self-contained HTML file on ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.env = environment()
        self.run: Mapping[str, Any] = {}

    def start(self, run: Mapping[str, Any]) -> None:
        self.run = run
        self.stream.write(self.env.get_template("head.html.j2").render(
            run=run, statuses=[str(status) for status in NodeStatus], kinds=KINDS))

    def nodes(self, chunk: int, entries: Sequence[Mapping[str, Any]]) -> None:
        self.stream.write(self.env.get_template("chunk.html.j2").render(
            chunk=chunk, nodes=entries, drawings=packed([entry["drawing"] for entry in entries])))
        self.stream.flush()

    def end(self, closing: Mapping[str, Any]) -> None:
        self.stream.write(self.env.get_template("tail.html.j2").render(run=self.run,
                                                                       **closing))
        self.stream.flush()


def packed(value: object) -> str:
    """``value`` as compact JSON, gzip-compressed, base64-encoded (what the page decodes)."""
    text = json.dumps(value, separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(text, compresslevel=6, mtime=0)).decode("ascii")


class JsonWriter:
    """One JSON document on ``stream``: ``run``, ``nodes`` (streamed), then the
    summary, ``capacity``, ``refusals`` and ``scheduling``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.first = True

    def start(self, run: Mapping[str, Any]) -> None:
        self.stream.write('{"report": "migrate_compute_inventory", "run": ')
        json.dump(run, self.stream)
        self.stream.write(', "nodes": [\n')

    def nodes(self, chunk: int, entries: Sequence[Mapping[str, Any]]) -> None:
        for entry in entries:
            if not self.first:
                self.stream.write(",\n")
            self.first = False
            json.dump(entry, self.stream, separators=(",", ":"))
        self.stream.flush()

    def end(self, closing: Mapping[str, Any]) -> None:
        self.stream.write("\n]")
        for key, value in closing.items():
            self.stream.write(f", {json.dumps(key)}: ")
            json.dump(value, self.stream)
        self.stream.write("}\n")
        self.stream.flush()


def writer_for(path: str, stream: TextIO) -> ReportWriter:
    """The writer for ``path``'s format: JSON for ``*.json``, else HTML."""
    return JsonWriter(stream) if path.lower().endswith(".json") else HtmlWriter(stream)

"""Cells as nova's API database maps them (``cell_mappings``), and their templated URLs.

Every nova deployment has cell0, where instances that could not be
scheduled are buried; its uuid is fixed by nova. A reader of every cell
skips it when looking for compute nodes.

A cell mapping's ``database_connection`` may be a template that nova fills
from its own ``[database] connection`` each time it loads the mapping, so
one mapping serves hosts that reach the database under different names or
credentials. :func:`fill_url_template` applies nova's rules:

* the default URL is split as :func:`urllib.parse.urlparse` splits it;
  ``{scheme}``, ``{username}``, ``{password}``, ``{hostname}`` (lower case,
  IPv6 brackets removed), ``{port}``, ``{path}`` (without its leading
  ``/``), ``{query}`` and ``{fragment}`` are its parts;
* a part the default URL lacks fills in as the text ``None`` (Python's
  ``str.format`` of None, as in nova);
* a default whose network location lists several hosts separated by
  commas (oslo.messaging's form) also gives ``{username1}``,
  ``{password1}``, ``{hostname1}``, ``{port1}``, ``{username2}``, ... for
  each of them, split by hand (hostname as written, port as text; after
  a bracketed IPv6 address the port keeps its ``:``, as in nova);
* a mapping without ``{`` is used as it is.

Where nova logs an error and goes on with the unfilled template (no
``[database] connection``, an unknown placeholder, a port that is not a
number), :func:`fill_url_template` raises :class:`CellUrlTemplateError`:
a tool must not try to connect to ``mysql+pymysql://{username}@...``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib import parse

#: nova's fixed uuid of cell0.
CELL0_UUID = "00000000-0000-0000-0000-000000000000"


class CellUrlTemplateError(ValueError):
    """A templated cell URL cannot be filled; the message is one line without secrets."""


@dataclass(frozen=True)
class CellMapping:
    """One ``cell_mappings`` row: how to reach a cell's database and message queue.

    ``database_connection`` is the row's value as stored (perhaps a template).
    """

    uuid: str
    name: str | None
    database_connection: str
    transport_url: str | None = None

    @property
    def is_cell0(self) -> bool:
        return self.uuid == CELL0_UUID

    @property
    def label(self) -> str:
        """How messages name the cell: ``cell1 (uuid)``, or the uuid of an unnamed one."""
        return f"{self.name} ({self.uuid})" if self.name else self.uuid

    def matches(self, wanted: str) -> bool:
        """Whether ``--cell wanted`` names this cell (its name or its uuid)."""
        return wanted in (self.name, self.uuid)

    def database_url(self, default_connection: str | None) -> str:
        """The cell database's URL, its template filled from ``default_connection``
        (nova.conf ``[database] connection``); CellUrlTemplateError when it cannot be."""
        if "{" not in self.database_connection:
            return self.database_connection
        if not default_connection:
            raise CellUrlTemplateError(
                f"cell {self.label}: database_connection is a template but nova.conf "
                "[database] connection, which fills it, is not set")
        try:
            return fill_url_template(self.database_connection, default_connection)
        except CellUrlTemplateError as error:
            raise CellUrlTemplateError(f"cell {self.label}: {error}") from None


def _host_parts(netloc: str) -> dict[str, str | None]:
    """``user:password@host:port`` of one host of a comma-separated network location,
    split as nova splits it: at the first ``@``, the first ``:`` of each side; after
    a bracketed IPv6 address the port is the rest as written (``:5672``)."""
    userinfo, at, hostport = netloc.partition("@")
    if not at:
        userinfo, hostport = "", netloc
    port: str | None = None
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            raise CellUrlTemplateError("[database] connection: unbalanced '[' in "
                                       "an IPv6 address")
        hostname, port = hostport[1:end], hostport[end + 1:]
    elif ":" in hostport:
        hostname, port = hostport.split(":", 1)
    else:
        hostname = hostport
    username, colon, password = userinfo.partition(":")
    return {"username": username, "password": password if colon else None,
            "hostname": hostname, "port": port}


def template_values(default_connection: str) -> dict[str, object]:
    """The placeholders of a cell URL template and their values from ``default_connection``."""
    parts = parse.urlparse(default_connection)
    try:
        port = parts.port
    except ValueError:
        raise CellUrlTemplateError("[database] connection has a port that is not "
                                   "a number") from None
    values: dict[str, object] = {
        "scheme": parts.scheme, "username": parts.username, "password": parts.password,
        "hostname": parts.hostname, "port": port, "path": parts.path.lstrip("/"),
        "query": parts.query, "fragment": parts.fragment}
    if "," in parts.netloc:
        for index, netloc in enumerate(parts.netloc.split(","), start=1):
            values.update((f"{key}{index}", value)
                          for key, value in _host_parts(netloc).items())
    return values


def fill_url_template(template: str, default_connection: str) -> str:
    """``template`` with its placeholders filled from ``default_connection`` (see module)."""
    try:
        return template.format(**template_values(default_connection))
    except CellUrlTemplateError:
        raise
    except KeyError as error:
        raise CellUrlTemplateError(f"unknown placeholder {{{error.args[0]}}} in "
                                   "database_connection") from None
    except (ValueError, IndexError) as error:
        raise CellUrlTemplateError(f"database_connection is not a valid template: "
                                   f"{error}") from None

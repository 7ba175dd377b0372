"""Write host description files: a header comment naming the sources, then the YAML.

Files are written to a temporary name and renamed, so an interrupted run
never leaves a half-written description behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

import yaml


def header(title: str, sources: Sequence[str], notes: Sequence[str]) -> str:
    lines = [f"# {title}", "# Sources:"]
    lines.extend(f"#   {source}" for source in sources)
    if notes:
        lines.append("# Notes:")
        lines.extend(f"#   {note}" for note in notes)
    return "\n".join(lines) + "\n"


#: libyaml's safe dumper when PyYAML was built with it (several times faster).
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_yaml(document: dict) -> str:
    """Block-style YAML in the document's key order, safe types only."""
    return yaml.dump(document, Dumper=DUMPER, sort_keys=False, default_flow_style=False,
                     allow_unicode=True)


def render(document: dict, comment: str) -> str:
    return comment + to_yaml(document)


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".yaml", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def file_name(host: str) -> str:
    """``<host>.yaml``, with path separators replaced so a host name cannot escape DIR."""
    return host.replace(os.sep, "_").replace("\0", "_") + ".yaml"

"""``placement-gabbi-run``: gabbi-run for an in-process Placement, fixtures included.

gabbi's own ``gabbi-run`` (gabbi 4.x) only reaches a service over the
network and runs no fixtures. This command runs YAML the way gabbi-run
does (same ``--`` file list or standard input, same ``-x``, ``-q``, ``-v``,
``-r``, ``--unsafe-yaml``; one suite per file; exit status 1 on any
failure, 2 for a wrong input, found before anything runs) against this
service in-process: each file gets a fresh database and the fixtures it
names (``fixtures: [SharedStorageFixture]``)::

    placement-gabbi-run -- tests/one.yaml tests/two.yaml
    placement-gabbi-run --database-server postgresql+psycopg://postgres@127.0.0.1 -- t.yaml
    placement-gabbi-run --fixture-module myproject.gabbi_fixtures -- t.yaml

A file with no ``fixtures:`` line gets :class:`APIFixture`.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple, TextIO

import yaml
from gabbi import reporter, runner, utils

from placement_wsgi.testing.databases import (
    ENV_DATABASE_SERVER,
    server_from_environment,
    server_problem,
)
from placement_wsgi.testing.loader import fixture_namespace, suite_from_dict

PROGRAM = "placement-gabbi-run"
#: Exit status of a wrong input (a file, a fixture module, the database server).
EXIT_BAD_INPUT = 2


class BadInput(Exception):
    """An input the run cannot use; the message is one line."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="placement-gabbi-run",
        description="Run gabbi YAML (files after --, else standard input) against an "
                    "in-process Placement with a fresh database per file.")
    parser.add_argument("-x", "--failfast", action="store_true", help="stop at the first failure")
    parser.add_argument("-q", "--quiet", action="store_true", help="no test runner output")
    parser.add_argument("-v", "--verbose", dest="verbosity", choices=["all", "body", "headers"],
                        help="show requests and responses")
    parser.add_argument("-r", "--response-handler", dest="response_handlers", action="append",
                        default=[], help="extra gabbi response handler, package.module[:class]")
    parser.add_argument("--fixture-module", dest="fixture_modules", action="append", default=[],
                        help="module with more gabbi fixtures (repeatable)")
    parser.add_argument("--database-server", default=None,
                        help=f"sqlite or a server URL (default: ${ENV_DATABASE_SERVER}, else "
                             "sqlite)")
    parser.add_argument("--unsafe-yaml", dest="safe_yaml", action="store_false",
                        help="let YAML build Python objects")
    return parser


def load_file(handle: TextIO, name: str, safe: bool) -> dict[str, Any]:
    """One YAML document of tests; :class:`BadInput` when it cannot be one."""
    try:
        suite_dict = utils.load_yaml(handle, safe=safe)
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise BadInput(f"{name}: not a YAML file ({' '.join(str(error).split())})") from error
    if not isinstance(suite_dict, dict) or not isinstance(suite_dict.get("tests"), list):
        raise BadInput(f"{name}: not gabbi tests (no 'tests:' list)")
    return suite_dict


def run_suite(suite_dict: dict[str, Any], name: str, directory: str, namespace: Any,
              handler_objects: list[Any], args: argparse.Namespace) -> bool:
    """Run one loaded YAML document; whether every test passed."""
    suite_dict.setdefault("fixtures", ["APIFixture"])
    if args.verbosity:
        suite_dict.setdefault("defaults", {})["verbose"] = args.verbosity
    suite = suite_from_dict(name, suite_dict, directory, namespace, handler_objects)
    stream = io.StringIO() if args.quiet else sys.stderr
    result = reporter.ConciseTestRunner(
        stream=stream, verbosity=2, failfast=args.failfast).run(suite)
    return result.wasSuccessful()


class Document(NamedTuple):
    """One file of tests, read: where it came from, its suite name and directory."""

    source: str
    name: str
    directory: str
    tests: dict[str, Any]


def _documents(files: Sequence[str] | None, safe: bool) -> list[Document]:
    """Each file read (standard input without files), all before any runs, so a
    wrong one stops the run before it starts."""
    if files is None:
        return [Document("standard input", "input", ".",
                         load_file(sys.stdin, "standard input", safe))]
    documents = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                tests = load_file(handle, path, safe)
        except OSError as error:
            raise BadInput(f"{path}: {error.strerror}") from error
        documents.append(Document(path, os.path.splitext(os.path.basename(path))[0],
                                  os.path.dirname(path) or ".", tests))
    return documents


def _fixture_modules(names: Sequence[str]) -> list[Any]:
    try:
        return [importlib.import_module(name) for name in names]
    except ImportError as error:
        raise BadInput(f"--fixture-module: cannot import {error.name or error}") from error


def _run(args: argparse.Namespace, files: Sequence[str] | None) -> int:
    documents = _documents(files, args.safe_yaml)
    modules = _fixture_modules(args.fixture_modules)
    problem = server_problem(args.database_server or server_from_environment())
    if problem:
        raise BadInput(problem)
    namespace = fixture_namespace(args.database_server, modules)
    handler_objects = runner.initialize_handlers(args.response_handlers, False)
    failures = []
    for document in documents:
        if not run_suite(document.tests, document.name, document.directory, namespace,
                         handler_objects, args):
            failures.append(document.source)
            if args.failfast:
                break
    if failures and files is not None:
        print("There were failures in the following files:", *failures, sep="\n",
              file=sys.stderr)
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    # The legacy policy defaults (APIFixture's) make oslo.policy warn once per
    # file about each deprecated rule; a test run has nothing to act on there.
    warnings.filterwarnings("ignore", message="Policy .* was deprecated", category=UserWarning)
    argv = list(sys.argv[1:] if argv is None else argv)
    options, files = runner.extract_file_paths(argv)
    args = _parser().parse_args(options)
    try:
        return _run(args, files)
    except BadInput as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())

"""``placement-gabbi-run``: gabbi-run for an in-process Placement, fixtures included.

gabbi's own ``gabbi-run`` (gabbi 4.x) only reaches a service over the
network and runs no fixtures. This command runs YAML the way gabbi-run
does (same ``--`` file list or standard input, same ``-x``, ``-q``, ``-v``,
``-r``, ``--unsafe-yaml``; one suite per file; exit status 1 on any
failure) against this service in-process: each file gets a fresh database
and the fixtures it names (``fixtures: [SharedStorageFixture]``)::

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
from typing import Any, TextIO

from gabbi import reporter, runner, utils

from placement_wsgi.testing.databases import ENV_DATABASE_SERVER
from placement_wsgi.testing.loader import fixture_namespace, suite_from_dict


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


def run_file(handle: TextIO, name: str, directory: str, namespace: Any,
             handler_objects: list[Any], args: argparse.Namespace) -> bool:
    """Run one YAML document; whether every test passed."""
    suite_dict = utils.load_yaml(handle, safe=args.safe_yaml)
    suite_dict.setdefault("fixtures", ["APIFixture"])
    if args.verbosity:
        suite_dict.setdefault("defaults", {})["verbose"] = args.verbosity
    suite = suite_from_dict(name, suite_dict, directory, namespace, handler_objects)
    stream = io.StringIO() if args.quiet else sys.stderr
    result = reporter.ConciseTestRunner(
        stream=stream, verbosity=2, failfast=args.failfast).run(suite)
    return result.wasSuccessful()


def main(argv: Sequence[str] | None = None) -> int:
    # The legacy policy defaults (APIFixture's) make oslo.policy warn once per
    # file about each deprecated rule; a test run has nothing to act on there.
    warnings.filterwarnings("ignore", message="Policy .* was deprecated", category=UserWarning)
    argv = list(sys.argv[1:] if argv is None else argv)
    options, files = runner.extract_file_paths(argv)
    args = _parser().parse_args(options)
    namespace = fixture_namespace(
        args.database_server,
        [importlib.import_module(module) for module in args.fixture_modules])
    handler_objects = runner.initialize_handlers(args.response_handlers, False)
    if files is None:
        return 0 if run_file(sys.stdin, "input", ".", namespace, handler_objects, args) else 1
    failures = []
    for path in files:
        with open(path) as handle:
            name = os.path.splitext(os.path.basename(path))[0]
            if not run_file(handle, name, os.path.dirname(path) or ".", namespace,
                            handler_objects, args):
                failures.append(path)
                if args.failfast:
                    break
    if failures:
        print("There were failures in the following files:", *failures, sep="\n",
              file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

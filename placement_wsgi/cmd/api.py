"""``placement-api``: a threaded development server for the Placement service.

::

    placement-api [--config-file FILE ...] [--host 127.0.0.1] [--port 8778]

Serves the same application as ``placement_wsgi.wsgi:application`` with the
standard library's ``wsgiref`` server, one thread per request. Meant for
development and demos; run gunicorn or uwsgi in production (see README).
Configuration is found as for ``placement-manage``. Exit status: 0 after
Ctrl-C or SIGTERM, 1 when the service cannot start (one line on standard
error: the database server stayed unreachable, the port is taken), 2 for
bad usage or a configuration to fix (config files, option values, the
database URL or the database it names, a database not synced to head
without ``sync_on_startup``).
"""

from __future__ import annotations

import argparse
import signal
import socketserver
import sys
from collections.abc import Sequence
from typing import Any
from wsgiref import simple_server

from placement_wsgi import service

PROGRAM = "placement-api"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8778


class ThreadingWSGIServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    """wsgiref's server, handling each connection in its own thread."""

    daemon_threads = True
    allow_reuse_address = True


class QuietHandler(simple_server.WSGIRequestHandler):
    """Request log lines in the usual access-log shape, without reverse DNS."""

    def address_string(self) -> str:
        return str(self.client_address[0])


def build_parser() -> argparse.ArgumentParser:
    """The command line of this script (also used by its tests)."""
    parser = argparse.ArgumentParser(
        prog=PROGRAM, description="Run the Placement API with a development server.")
    service.add_config_file_argument(parser)
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to listen on (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"TCP port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    return parser


def make_server(host: str, port: int, application: Any) -> simple_server.WSGIServer:
    """A threaded wsgiref server bound to ``host:port`` serving ``application``."""
    return simple_server.make_server(
        host, port, application, server_class=ThreadingWSGIServer, handler_class=QuietHandler)


def _stop_on_sigterm(_signum: int, _frame: Any) -> None:
    """SIGTERM stops the server like Ctrl-C (serve_forever runs in this thread)."""
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point; serves until interrupted."""
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        sys.stderr.write(f"{PROGRAM}: error: port {args.port} is out of range\n")
        return 2
    try:
        conf = service.load_conf(config_files=args.config_files)
        # Logs to standard error (unless a log file is configured), so that
        # standard output carries only the "serving" line.
        conf.set_default("use_stderr", True)
        service.setup_logging(conf, PROGRAM)
        application = service.build_application(conf)
    except service.StartupError as error:
        sys.stderr.write(f"{PROGRAM}: error: {error}\n")
        return error.exit_code
    try:
        server = make_server(args.host, args.port, application)
    except OSError as error:
        sys.stderr.write(
            f"{PROGRAM}: error: cannot listen on {args.host}:{args.port}: {error.strerror}\n")
        return 1
    host, port = server.server_address[:2]
    shown_host = f"[{host}]" if ":" in str(host) else host
    print(f"{PROGRAM}: serving http://{shown_host}:{port}/ "
          f"(database {service.describe_url(conf.placement_database.connection)}, "
          f"auth {conf.api.auth_strategy}); Ctrl-C stops", flush=True)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(f"{PROGRAM}: stopped", flush=True)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

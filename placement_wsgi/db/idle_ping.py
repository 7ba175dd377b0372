"""Check a pooled connection before use only when it sat idle.

SQLAlchemy's ``pool_pre_ping`` sends ``SELECT 1`` on every checkout: one
more round trip per transaction, that is per request of the service (about
a fifth of a request's statements for the migration's reads). A connection
handed back a moment ago is as good as the last statement it ran, so this
pings only one that sat in the pool for at least :data:`PING_AFTER_IDLE_SECONDS`.

Contract: a connection idle that long is pinged and, when the ping fails,
replaced before use (what ``pool_pre_ping`` did), so a database back after an
outage serves the next request. A connection that broke within that time
(a database restarted between two requests of a busy service) fails on its
first statement instead; that is a lost connection, which
:meth:`placement_wsgi.db.database.Database.read` and ``write`` already run
again in a fresh transaction on a new connection (nothing of a transaction
whose first statement failed was applied), and SQLAlchemy then replaces
every connection of the pool older than the failure.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

#: Seconds in the pool after which a connection is pinged before use.
PING_AFTER_IDLE_SECONDS = 1.0

_RETURNED_AT = "placement_returned_at"


def ping_when_idle(engine: Engine, idle_seconds: float = PING_AFTER_IDLE_SECONDS) -> None:
    """Make ``engine``'s pool ping a connection idle ``idle_seconds`` or more at
    checkout (instead of ``pool_pre_ping``'s every checkout)."""
    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info[_RETURNED_AT] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        returned = record.info.pop(_RETURNED_AT, None)
        if returned is None or time.monotonic() - returned < idle_seconds:
            return  # a new connection, or one in use a moment ago
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as error:
            # The pool discards this connection and checks out a new one.
            raise exc.DisconnectionError(f"idle connection failed its ping: {error}") from error

"""The commands' log records: one line each, an exception without its traceback."""

from __future__ import annotations

import io
import logging

from nova_reshape.cmd.log_lines import FORMAT, OneLineFormatter


def _formatted(**fields) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter(FORMAT))
    logger = logging.getLogger("sqlalchemy.pool.impl.QueuePool.test")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        try:
            raise ConnectionError("Lost connection to MySQL server\nduring query")
        except ConnectionError:
            logger.error("Exception during reset or similar", **fields)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_an_exception_is_its_type_and_message_on_the_record_s_line():
    text = _formatted(exc_info=True)
    assert text == ("ERROR sqlalchemy.pool.impl.QueuePool.test: Exception during reset or "
                    "similar (ConnectionError: Lost connection to MySQL server during "
                    "query)\n")
    assert "Traceback" not in text


def test_a_record_without_an_exception_is_the_plain_format():
    assert _formatted() == ("ERROR sqlalchemy.pool.impl.QueuePool.test: Exception during "
                            "reset or similar\n")

"""The compute side's exceptions: nova's names, messages from keyword arguments."""

from __future__ import annotations

import inspect

from nova_reshape import exception


def test_the_message_is_filled_from_the_keyword_arguments():
    error = exception.ComputeHostNotFound(host="cmp-07")
    assert str(error) == "Compute host cmp-07 could not be found."
    assert error.kwargs == {"host": "cmp-07"} and error.message == str(error)


def test_a_positional_message_replaces_the_format():
    assert str(exception.ReshapeFailed("mediated devices do not add up")) == \
        "mediated devices do not add up"


def test_a_missing_argument_does_not_hide_the_error():
    assert str(exception.ReshapeFailed(reason="x")) == \
        "Resource provider data migration failed: %(error)s ({'reason': 'x'})"
    assert str(exception.NovaException()) == "An unknown exception occurred."


def test_every_exception_is_a_nova_exception_with_a_message_format():
    classes = [cls for _, cls in inspect.getmembers(exception, inspect.isclass)
               if cls.__module__ == exception.__name__]
    assert len(classes) > 30
    assert all(issubclass(cls, exception.NovaException) and cls.msg_fmt for cls in classes)
    assert issubclass(exception.ComputeHostNotFound, exception.NotFound)


def test_exception_messages_and_kwargs():
    error = exception.ResourceProviderUpdateConflict(uuid="u", generation=3, error="boom")
    assert "u" in str(error) and "generation 3" in str(error) and "boom" in str(error)
    assert error.kwargs == {"uuid": "u", "generation": 3, "error": "boom"}
    assert isinstance(error, exception.PlacementAPIConflict)
    assert isinstance(exception.PlacementReshapeConflict(error="x"),
                      exception.PlacementAPIConflict)
    assert str(exception.InventoryInUse("free text detail")) == "free text detail"
    assert isinstance(exception.InventoryInUse("x"), exception.Invalid)
    assert isinstance(exception.ResourceProviderNotFound(name_or_uuid="n"),
                      exception.NotFound)
    assert "message" in str(exception.ResourceProviderRetrievalFailed(message="message"))

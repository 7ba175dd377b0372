"""The report client's exceptions: messages, kwargs and their families."""

from __future__ import annotations

from nova_reshape import exception


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

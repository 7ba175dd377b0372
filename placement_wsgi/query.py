"""The query-string grammar shared by GET /resource_providers and
GET /allocation_candidates: ``resources``, ``required`` and ``member_of``.

Parsing only: values come in as strings, go out as plain sets and dicts,
and every malformed value is a 400 with the reference service's message. Whether a
named trait or resource class exists is checked later, against the
database, by the caller.
"""

from __future__ import annotations

import dataclasses

from placement_wsgi import errors, uuids
from placement_wsgi.microversion import Version

_RESOURCES_FORM = (
    "Badly formed resources parameter. Expected resources query string parameter in "
    "form: ?resources=VCPU:2,MEMORY_MB:1024. Got: ")


def parse_resources(value: str) -> dict[str, int]:
    """``RC:N[,RC:N...]`` -> {class: amount}; a repeated class: last wins."""
    if not value or not value.strip():
        raise errors.BadRequest(_RESOURCES_FORM + "empty string.")
    amounts: dict[str, int] = {}
    for item in value.split(","):
        parts = item.split(":")
        if len(parts) != 2:
            raise errors.BadRequest(f"{_RESOURCES_FORM}{item}.")
        # Not stripped: a class name with spaces is simply an unknown class,
        # and int() already tolerates spaces around the amount.
        name, amount_text = parts
        try:
            amount = int(amount_text)
        except ValueError as error:
            raise errors.BadRequest(
                f"Requested resource {name} expected positive integer amount. "
                f"Got: {amount_text}.") from error
        if amount < 1:
            raise errors.BadRequest(
                f"Requested resource {name} requires amount >= 1. Got: {amount}.")
        amounts[name] = amount
    return amounts


@dataclasses.dataclass
class TraitFilter:
    """``required`` parsed: every any-of set must be met, no forbidden trait present.

    A plain required trait T is the any-of set {T}.
    """

    any_of: list[frozenset[str]] = dataclasses.field(default_factory=list)
    forbidden: set[str] = dataclasses.field(default_factory=set)

    @property
    def names(self) -> set[str]:
        """Every trait name mentioned (for the existence check)."""
        mentioned = set(self.forbidden)
        for group in self.any_of:
            mentioned |= group
        return mentioned

    @property
    def required(self) -> set[str]:
        """Traits that must all be present (the single-member any-of sets)."""
        return {next(iter(group)) for group in self.any_of if len(group) == 1}

    def __bool__(self) -> bool:
        return bool(self.any_of or self.forbidden)


def _trait_form(version: Version) -> str:
    if version >= (1, 22):
        return "HW_CPU_X86_VMX,!CUSTOM_MAGIC"
    return "HW_CPU_X86_VMX,CUSTOM_MAGIC"


_ANY_OF_FORM = "in:HW_CPU_X86_VMX,CUSTOM_MAGIC"
_INVALID_QUERY = "Invalid query string parameters: "


def parse_required(values: list[str], version: Version, key: str = "required") -> TraitFilter:
    """Parse the values of one ``required`` key (all repeats, in order).

    Below 1.39 only the last value counts; from 1.39 repeats are ANDed and
    the ``in:`` any-of form is allowed.
    """
    if version < (1, 39):
        values = values[-1:]
    result = TraitFilter()
    for value in values:
        if value.startswith("in:"):
            if version < (1, 39):
                raise errors.BadRequest(
                    f"{_INVALID_QUERY}The format '{_ANY_OF_FORM}' only supported since "
                    f"microversion 1.39. Got: {value}")
            names = [name.strip() for name in value[3:].split(",")]
            if any(not name for name in names):
                raise errors.BadRequest(
                    f"{_INVALID_QUERY}Expected '{key}' parameter value of the form: "
                    f"{_ANY_OF_FORM}. Got an empty trait in: {value}")
            if any(name.startswith("!") for name in names):
                raise errors.BadRequest(
                    f"{_INVALID_QUERY}The format '{_ANY_OF_FORM}' does not support "
                    f"forbidden traits. Got: {value}")
            result.any_of.append(frozenset(names))
            continue
        names = [raw.strip() for raw in value.split(",")]
        # Every leading "!" goes (``!!X`` is ``!X``); an empty name, even one
        # left over after the "!", is reported before a premature "!".
        plain = [name for name in names if not name.startswith("!")]
        forbidden = [name.lstrip("!") for name in names if name.startswith("!")]
        if not all(plain) or not all(forbidden):
            raise errors.BadRequest(
                f"{_INVALID_QUERY}Expected '{key}' parameter value of the form: "
                f"{_trait_form(version)}. Got an empty trait in: {value}")
        if forbidden and version < (1, 22):
            raise errors.BadRequest(
                f"{_INVALID_QUERY}Expected '{key}' parameter value of the form: "
                f"{_trait_form(version)}. Got: {value}")
        result.any_of.extend(frozenset([name]) for name in plain)
        result.forbidden.update(forbidden)
    return result


@dataclasses.dataclass
class AggregateFilter:
    """``member_of`` parsed: every any-of set must be met; no forbidden aggregate."""

    any_of: list[frozenset[str]] = dataclasses.field(default_factory=list)
    forbidden: set[str] = dataclasses.field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.any_of or self.forbidden)


def parse_member_of(values: list[str], version: Version, key: str = "member_of") -> AggregateFilter:
    """Parse every ``member_of`` value of one key, in the API's check order.

    ``key`` is the query key (``member_of`` or ``member_of<S>``); it names the
    key in the "Multiple ..." and "Forbidden ..." messages, while the UUID
    message always says ``'member_of'`` (as the reference service does).
    """
    if len(values) > 1 and version < (1, 24):
        raise errors.BadRequest(f"Multiple {key} parameters are not supported")
    result = AggregateFilter()
    for value in values:
        forbidden = value.startswith("!")
        body = value[1:] if forbidden else value
        any_of = body.startswith("in:")
        if any_of:
            body = body[3:]
        elif "," in body:
            raise errors.BadRequest(
                "Multiple values for 'member_of' must be prefixed with the 'in:' or "
                f"'!in:' keyword using the valid microversion. Got: {value}")
        ids = body.split(",")
        for aggregate in ids:
            if not uuids.is_lenient_uuid(aggregate):
                raise errors.BadRequest(
                    f"{_INVALID_QUERY}Expected 'member_of' parameter to contain valid "
                    f"UUID(s). Got: {aggregate}")
        if forbidden:
            if version < (1, 32):
                raise errors.BadRequest(
                    f"Forbidden {key} parameters are not supported in the specified "
                    "microversion")
            result.forbidden.update(ids)
        else:
            result.any_of.append(frozenset(ids))
    return result

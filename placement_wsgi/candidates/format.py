"""Candidates (tuples of provider ids) -> the JSON body of GET /allocation_candidates, as text.

Shapes by microversion: allocation requests as a list of providers (1.10-1.11)
or an object keyed by provider uuid (1.12+), with ``mappings`` from 1.34;
provider summaries with the requested classes only (<1.27) or every class,
``traits`` from 1.17, parent/root uuids from 1.29.

The body is written as JSON text directly rather than built as dicts and
passed to ``json.dumps``: a large answer has tens of thousands of small,
similar objects, and templating them is about ten times cheaper. Every
string that comes from the database goes through the JSON encoder's string
escaping, so the text is valid JSON whatever the data.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable, Sequence
from json.encoder import encode_basestring as quote

from placement_wsgi.candidates.loader import SummaryData
from placement_wsgi.candidates.options import Slot
from placement_wsgi.candidates.resolved import ResolvedRequest
from placement_wsgi.microversion import Version

#: placeholder of a uuid while a template is written (JSON text never holds NUL)
_MARK = re.compile("\x00([0-9]+)\x00")
_CUT = "\x00"


def allocation_providers(slots: list[Slot], candidates: Iterable[tuple[int, ...]]) -> set[int]:
    """Providers that get resources in some candidate (resourceless slots excluded)."""
    resourceful = [index for index, slot in enumerate(slots) if slot.amounts]
    if len(resourceful) == len(slots):  # the common case: one C-level pass
        return set(itertools.chain.from_iterable(candidates))
    providers: set[int] = set()
    for candidate in candidates:
        providers.update(candidate[index] for index in resourceful)
    return providers


class _Template:
    """An allocation request's text with holes for quoted uuids, filled by one
    ``str.join``.

    ``str.format`` re-parsed the whole template on every call (about 12,000
    instructions per answer of the nested bench, 5 % of its request); here the
    text is cut once and each answer is a list copy, a slice assignment and a
    join.
    """

    __slots__ = ("_skeleton", "_pick")

    def __init__(self, marked: str) -> None:
        """``marked``: the text with a :data:`_MARK` of i where ``values[i]`` goes."""
        pieces = _MARK.split(marked)  # literal, index, literal, ..., literal
        indexes = [int(index) for index in pieces[1::2]]
        self._skeleton = pieces
        if len(indexes) == 1:
            only = indexes[0]
            self._pick = lambda values: (values[only],)
        elif indexes:
            self._pick = operator.itemgetter(*indexes)
        else:
            self._pick = lambda values: ()

    def fill(self, values: Sequence[str]) -> str:
        """The text with each hole replaced by its value (``values[i]`` for mark i)."""
        parts = self._skeleton.copy()
        parts[1::2] = self._pick(values)
        return "".join(parts)


def _object(members: Iterable[str]) -> str:
    return "{" + ",".join(members) + "}"


class Formatter:
    """Writes allocation requests and provider summaries for one request."""

    def __init__(self, resolved: ResolvedRequest, slots: list[Slot], summary: SummaryData,
                 version: Version) -> None:
        self.version = version
        self.summary = summary
        self._class = {rc: quote(name) for rc, name in resolved.class_names.items()}
        self._quoted: dict[int, str] = {}
        #: candidate pattern -> template (see allocation_request)
        self._templates: dict[tuple[int, ...], _Template] = {}
        #: the template of candidates whose slots all have different providers
        self._distinct: _Template | None = None
        #: per slot: [(quoted class name, amount)]
        self._named = [[(self._class[rc], amount) for rc, amount in slot.amounts]
                       for slot in slots]
        suffixes: dict[str, list[int]] = {group.suffix: [] for group in resolved.groups}
        for index, slot in enumerate(slots):
            suffixes[resolved.groups[slot.group].suffix].append(index)
        self._mapping_slots = [(quote(suffix), indexes) for suffix, indexes in suffixes.items()]
        # When no class is asked for twice, a candidate that puts every slot on
        # one provider always has the same resources: write them once.
        merged: dict[str, int] = {}
        repeated = False
        for named in self._named:
            for name, amount in named:
                repeated = repeated or name in merged
                merged[name] = amount
        self._merged = None if repeated else _object(
            f"{name}:{amount}" for name, amount in merged.items())
        #: the one-provider request cut around its uuid: ``uuid.join(parts)``
        #: writes one in a single C call
        self._one_parts = (None if self._merged is None
                           else self._one_provider(_CUT).split(_CUT))

    def _uuid(self, provider: int) -> str:
        quoted = self._quoted.get(provider)
        if quoted is None:
            quoted = self._quoted[provider] = quote(self.summary.uuid_of[provider])
        return quoted

    def _quote_all(self) -> dict[int, str]:
        """Every known provider's quoted uuid (one C-level pass; the answer
        shows most of them)."""
        uuid_of = self.summary.uuid_of
        if len(self._quoted) < len(uuid_of):
            self._quoted = dict(zip(uuid_of, map(quote, uuid_of.values()), strict=False))
        return self._quoted

    def allocation_request(self, candidate: tuple[int, ...]) -> str:
        """One allocation request as JSON text."""
        if self._one_parts is not None and candidate.count(candidate[0]) == len(candidate):
            return self._uuid(candidate[0]).join(self._one_parts)
        # The text depends on the candidate only through its uuids and its
        # pattern (which slots share a provider): write it once per pattern.
        if len(set(candidate)) == len(candidate):  # the common pattern: no sharing
            template = self._distinct
            if template is None:
                template = self._distinct = self._template(tuple(range(len(candidate))))
            quoted = self._quoted
            return template.fill([quoted.get(provider) or self._uuid(provider)
                                  for provider in candidate])
        distinct = list(dict.fromkeys(candidate))
        pattern = tuple(map(distinct.index, candidate))
        template = self._templates.get(pattern)
        if template is None:
            template = self._templates[pattern] = self._template(pattern)
        return template.fill(list(map(self._uuid, distinct)))

    def _template(self, pattern: tuple[int, ...]) -> _Template:
        """An allocation request whose i-th value is the quoted uuid of the i-th
        distinct provider of the candidate."""
        marks = [f"\x00{position}\x00" for position in range(max(pattern) + 1)]
        return _Template(self._write([marks[position] for position in pattern]))

    def _write(self, uuids: list[str]) -> str:
        """The allocation request that puts slot i on the provider quoted as ``uuids[i]``."""
        resources: dict[str, dict[str, int]] = {}
        for uuid, named in zip(uuids, self._named, strict=True):
            if not named:
                continue
            amounts = resources.get(uuid)
            if amounts is None:
                resources[uuid] = amounts = {}
            for name, amount in named:
                amounts[name] = amounts.get(name, 0) + amount
        written = {uuid: _object(f"{name}:{amount}" for name, amount in amounts.items())
                   for uuid, amounts in resources.items()}
        if self.version < (1, 12):
            return '{"allocations":[' + ",".join(
                f'{{"resource_provider":{{"uuid":{uuid}}},"resources":{amounts}}}'
                for uuid, amounts in written.items()) + "]}"
        allocations = _object(f'{uuid}:{{"resources":{amounts}}}'
                              for uuid, amounts in written.items())
        if self.version < (1, 34):
            return f'{{"allocations":{allocations}}}'
        mappings = _object(
            f"{suffix}:[" + ",".join(dict.fromkeys(uuids[index] for index in indexes)) + "]"
            for suffix, indexes in self._mapping_slots)
        return f'{{"allocations":{allocations},"mappings":{mappings}}}'

    def _one_provider(self, uuid: str) -> str:
        resources = self._merged
        if self.version < (1, 12):
            return (f'{{"allocations":[{{"resource_provider":{{"uuid":{uuid}}},'
                    f'"resources":{resources}}}]}}')
        if self.version < (1, 34):
            return f'{{"allocations":{{{uuid}:{{"resources":{resources}}}}}}}'
        mappings = _object(f"{suffix}:[{uuid}]" for suffix, _ in self._mapping_slots)
        return (f'{{"allocations":{{{uuid}:{{"resources":{resources}}}}},'
                f'"mappings":{mappings}}}')

    def provider_summaries(self, providers: Iterable[int]) -> str:
        """The ``provider_summaries`` object as JSON text."""
        return "{" + ",".join(self._summary_entries(providers)) + "}"

    def _summary_entries(self, providers: Iterable[int]) -> list[str]:
        """One ``"uuid":{...}`` text per provider.

        Providers of similar trees have equal resource lists and trait lists:
        each distinct list is written once, and each entry is one f-string
        (one allocation) of pre-written parts.
        """
        summary = self.summary
        classes = self._class
        with_traits = self.version >= (1, 17)
        with_tree = self.version >= (1, 29)
        parent_of = summary.parent_of
        root_of = summary.root_of
        resources_of = summary.resources
        traits_of = summary.traits
        quoted = self._quote_all()
        # a parent's text by one look-up: its quoted uuid, ``null`` for a root
        parent_text: dict[int | None, str] = {**quoted, None: "null"} if with_tree else {}
        written_resources: dict[tuple, str] = {}
        written_traits: dict[tuple[str, ...], str] = {}
        no_traits = ',"traits":[]' if with_traits else ""
        entries = []
        for provider in providers:
            key = tuple(resources_of.get(provider, ()))
            resources = written_resources.get(key)
            if resources is None:
                resources = written_resources[key] = '{"resources":' + _object(
                    f'{classes[rc]}:{{"capacity":{capacity},"used":{used}}}'
                    for rc, capacity, used in key)
            traits = no_traits
            if with_traits:
                names = traits_of.get(provider)
                if names:
                    key = tuple(names)
                    traits = written_traits.get(key)
                    if traits is None:
                        traits = written_traits[key] = (
                            ',"traits":[' + ",".join(map(quote, key)) + "]")
            if with_tree:
                entries.append(
                    f'{quoted[provider]}:{resources}{traits},"parent_provider_uuid":'
                    f'{parent_text[parent_of.get(provider)]},'
                    f'"root_provider_uuid":{quoted[root_of[provider]]}}}')
            else:
                entries.append(f"{quoted[provider]}:{resources}{traits}}}")
        return entries

    def body(self, candidates: list[tuple[int, ...]], shown: Iterable[int]) -> str:
        """The whole response body (it can be megabytes)."""
        quoted = self._quote_all()  # every provider of the answer: no misses below
        allocation_request = self.allocation_request
        one = self._one_parts
        written = []
        append = written.append
        for candidate in candidates:  # the two common shapes inline, the rest by method
            width = len(candidate)
            if one is not None and candidate.count(candidate[0]) == width:
                append(quoted[candidate[0]].join(one))
            elif len(set(candidate)) == width:
                template = self._distinct
                if template is None:
                    template = self._distinct = self._template(tuple(range(width)))
                append(template.fill(tuple(map(quoted.__getitem__, candidate))))
            else:
                append(allocation_request(candidate))
        # one join into one buffer: every extra megabyte-sized copy costs a page
        # fault per 4 KiB on top of the copying
        parts = ['{"allocation_requests":[']
        parts += _comma_separated(written)
        parts.append('],"provider_summaries":{')
        parts += _comma_separated(self._summary_entries(shown))
        parts.append("}}")
        return "".join(parts)


def _comma_separated(texts: list[str]) -> list[str]:
    """``texts`` with ``","`` between them, as a list to join later."""
    if not texts:
        return []
    separated = [","] * (2 * len(texts) - 1)
    separated[::2] = texts
    return separated

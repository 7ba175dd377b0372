"""JsonFilter: operators, variables, dropped arguments and nova's quirks."""

from __future__ import annotations

import json

import pytest

from tests.unit.nova_reshape.scheduler.helpers import host, passes, run_filter

HOSTS = [host("h1", memory_mb=8192, stats={"tier": "gold"}),
         host("h2", memory_mb=2048, stats={"tier": "silver"}),
         host("h3", memory_mb=512)]


def _q(query):
    return {"scheduler_hints": {"query": query}}


@pytest.mark.parametrize(("query", "expected"), [
    ([">=", "$free_ram_mb", 2048], ["h1", "h2"]),
    (["<", "$free_ram_mb", 2048], ["h3"]),
    ([">", "$free_ram_mb", 512, 1024], ["h1", "h2"]),
    (["<=", "$free_ram_mb", 2048], ["h2", "h3"]),
    (["=", "$stats.tier", "gold"], ["h1"]),
    (["in", "$stats.tier", "gold", "silver"], ["h1", "h2"]),
    (["not", ["=", "$host", "h1"]], ["h2", "h3"]),
    (["or", ["=", "$host", "h1"], ["=", "$host", "h3"]], ["h1", "h3"]),
    (["and", [">=", "$free_ram_mb", 1024], ["=", "$stats.tier", "silver"]], ["h2"]),
    # nested "not" yields a non-empty list, which "and" never sees as False
    (["and", ["not", ["=", "$host", "h1"]]], ["h1", "h2", "h3"]),
    (["and"], ["h1", "h2", "h3"]),
    (["or"], []),
    # a missing variable is dropped: "=" is left with one argument -> False
    (["=", "$stats.tier", "gold"], ["h1"]),
    (["=", "$stats.missing"], []),
    # "" is dropped as well, changing the arity
    (["=", "$host", "", "h2"], ["h2"]),
    # = between a number and a string is just False
    (["=", "$free_ram_mb", "8192"], []),
    ([], ["h1", "h2", "h3"]),
])
def test_json_filter(query, expected):
    assert passes("JsonFilter", HOSTS, request=_q(query)) == expected


def test_query_given_as_json_string():
    query = json.dumps([">=", "$free_ram_mb", 2048])
    assert passes("JsonFilter", HOSTS, request=_q(query)) == ["h1", "h2"]


def test_no_query_passes_everything():
    assert passes("JsonFilter", HOSTS) == ["h1", "h2", "h3"]


def test_reason_quotes_the_query():
    _, rejected = run_filter("JsonFilter", HOSTS, request=_q(["=", "$host", "h1"]))
    assert '["=", "$host", "h1"]' in rejected["h2"]


def test_unknown_operator_raises_key_error():
    with pytest.raises(KeyError):
        run_filter("JsonFilter", HOSTS, request=_q(["~", "$host", "h1"]))


def test_ordering_a_number_against_a_string_raises_type_error():
    with pytest.raises(TypeError):
        run_filter("JsonFilter", HOSTS, request=_q(["<", "$free_ram_mb", "big"]))


def test_every_comparison_is_evaluated():
    with pytest.raises(TypeError):
        run_filter("JsonFilter", HOSTS, request=_q(["<", "$free_ram_mb", 1, "big"]))


def test_dotted_lookup_on_a_string_raises():
    with pytest.raises(AttributeError):
        run_filter("JsonFilter", [host("h1", cpu_info={"arch": "x86_64"})],
                   request=_q(["=", "$cpu_info.arch", "x86_64"]))


def test_invalid_json_text_raises_value_error():
    with pytest.raises(ValueError):
        run_filter("JsonFilter", HOSTS, request=_q("[not json"))


def test_compiled_queries_agree_with_the_reference_evaluator():
    from nova_reshape.scheduler.filters.json_filter import compile_query, evaluate
    from tests.unit.nova_reshape.scheduler.helpers import scenario

    queries = [
        [">=", "$free_ram_mb", 2048], ["not", ["=", "$host", "h1"]], ["and"], ["or"],
        ["and", ["not", ["=", "$host", "h1"]], [">=", "$free_ram_mb", 1024]],
        ["in", "$stats.tier", "gold", "silver"], ["=", "$host", "", "h2"], [],
        ["=", 1, 1], ["not", True, False], ["or", ["=", "$stats.missing", 3], []],
        ["=", "$", "x"], ["<", 1, 2, 3],
    ]
    hosts = scenario(HOSTS).hosts
    for query in queries:
        compiled = compile_query(query)
        for state in hosts:
            assert compiled(state) == evaluate(query, state), query

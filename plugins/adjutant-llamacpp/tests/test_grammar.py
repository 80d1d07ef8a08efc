"""Every grammar the planner builds is one llama.cpp accepts, whatever the schemas."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adjutant.operator.planner import reply_grammar
from adjutant_hookspecs import ProviderError, ToolDeclaration, ToolSafety
from adjutant_llamacpp import LlamaCpp

PROVIDER = LlamaCpp(context_size=256)


@pytest.fixture(autouse=True, scope="module")
def _free_the_model() -> Any:
    yield
    import anyio

    anyio.run(PROVIDER.aclose)


@pytest.mark.parametrize("bad", ["root ::= undefined-rule", 'root ::= "unterminated'])
def test_a_bad_grammar_is_refused_not_used(bad: str) -> None:
    with pytest.raises(ProviderError, match="refused the grammar"):
        PROVIDER.check_grammar(bad)

_leaf = st.one_of(
    st.sampled_from([{"type": t} for t in ("string", "integer", "number", "boolean", "null")]),
    st.lists(st.one_of(st.text(max_size=6), st.integers(-5, 5), st.booleans()), min_size=1,
             max_size=4, unique_by=repr).map(lambda values: {"enum": values}),
    st.text(max_size=8).map(lambda value: {"const": value}),
    st.tuples(st.integers(-5, 5), st.integers(0, 10**9)).map(
        lambda b: {"type": "integer", "minimum": b[0], "maximum": b[1]}),
    st.just({}),
    st.just({"type": "string", "pattern": r"^\S+$", "maxLength": 64}),  # one word
)
_schema = st.recursive(_leaf, lambda inner: st.one_of(
    inner.map(lambda item: {"type": "array", "items": item}),
    st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4).flatmap(
        lambda props: st.lists(st.sampled_from(sorted(props)) if props else st.nothing(),
                               unique=True).map(
            lambda required: {"type": "object", "properties": props, "required": required})),
    st.lists(inner, min_size=1, max_size=3).map(lambda options: {"anyOf": options}),
), max_leaves=12)


def declaration(name: str, schema: dict[str, Any]) -> ToolDeclaration:
    return ToolDeclaration(name=name, version="1", description="d", args_schema=schema,
                           safety=ToolSafety())


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z]{1,6}\.[a-z_]{1,8}", fullmatch=True),
                       _schema.map(lambda s: {"type": "object", "properties": {"a": s}}
                                   if s.get("type") != "object" else s),
                       max_size=4))
def test_llama_cpp_parses_every_reply_grammar(schemas: dict[str, dict[str, Any]]) -> None:
    grammar = reply_grammar({name: declaration(name, s) for name, s in schemas.items()})
    PROVIDER.check_grammar(grammar)  # llama.cpp's own parser

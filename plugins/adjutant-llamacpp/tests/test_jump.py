"""Jump-forward decoding: the text a reply grammar forces is found exactly, and the
real model continues after it in one batch (short prompts: cheap)."""

from __future__ import annotations

import json
from contextlib import aclosing

import pytest
from llama_tools import LIST, READ

from adjutant.operator._grammar import reply_grammar
from adjutant_hookspecs import CompletionRequest
from adjutant_llamacpp import LlamaCpp
from adjutant_llamacpp._jump import forced_start


def test_a_chosen_first_tool_forces_the_reply_up_to_its_first_value() -> None:
    grammar = reply_grammar({"fs.read": READ, "proc.list": LIST}, ["fs.read"], response=False)
    forced, rest = forced_start(grammar)
    assert forced == '{"type":"plan","steps":[{"tool":"fs.read","args":{"path":"'
    assert rest.startswith("root ::= char{0,400}")  # the path itself is the model's
    # optional keys leave the arguments open
    forced, _ = forced_start(reply_grammar({"proc.list": LIST}, ["proc.list"],
                                           response=False))
    assert forced == '{"type":"plan","steps":[{"tool":"proc.list","args":{'
    forced, _ = forced_start(reply_grammar({}))
    assert forced == '{"type":"response","text":"'


def test_nothing_is_forced_where_the_grammar_leaves_a_choice_or_is_not_understood() -> None:
    grammar = reply_grammar({"fs.read": READ, "proc.list": LIST})  # plan or response
    assert forced_start(grammar) == ("", grammar)  # alternatives are not factored
    assert forced_start('root ::= "a" | "b"\n') == ("", 'root ::= "a" | "b"\n')
    weird = 'root ::= "x" thing\nthing ::= "y"\n  | "z"\n'  # a continued rule
    assert forced_start(weird) == ("", weird)
    assert forced_start('root ::= "all of it"\n') == ("", 'root ::= "all of it"\n')


@pytest.mark.anyio
async def test_the_model_continues_after_the_forced_text_evaluated_in_one_batch() -> None:
    grammar = reply_grammar({"fs.read": READ, "proc.list": LIST}, ["fs.read"], response=False)
    request = CompletionRequest(prompt="Reply with a plan that reads notes.txt.",
                                grammar=grammar, temperature=0.0, max_tokens=40,
                                stop=("<END>",))
    provider = LlamaCpp(context_size=1024)
    try:
        async with aclosing(provider.complete(request)) as stream:
            text = "".join([c.text async for c in stream])
    finally:
        await provider.aclose()
    forced, _ = forced_start(grammar)
    assert text.startswith(forced[:-2])  # all but the last forced token, then the model
    reply = json.loads(text.split("<END>")[0])
    assert reply["steps"][0]["tool"] == "fs.read"
    assert provider.timings["forced_tokens"] >= 10
    assert provider.timings["generated_tokens"] < 20

"""Conformance suites: subclass one in your plugin's tests and provide its fixture.

Example, for a tool::

    from adjutant.testing.conformance import ToolConformance

    class TestWordCount(ToolConformance):
        @pytest.fixture
        def tool(self):
            return WordCount()

        @pytest.fixture
        def ctx(self, tmp_path):          # optional: where the example calls run
            (tmp_path / "notes.txt").write_text("one two\n")
            return ToolContext(cwd=str(tmp_path), cages=(str(tmp_path),))

Fixtures are overridden by defining them on the test class, as above. Every test in
the suite then runs against your object (async ones on asyncio and trio).
Overriding a standard test is allowed, but say why in its docstring.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from adjutant_hookspecs import (
    CompletionChunk,
    CompletionRequest,
    ContextBulletin,
    PolicyRequest,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    Verdict,
    convert,
    decode,
    encode,
)

from ..kernel._registry import schema_errors, validate

__all__ = [
    "ContextProviderConformance",
    "KeyValueStoreConformance",
    "LogStoreConformance",
    "PolicyConformance",
    "ProviderConformance",
    "ToolConformance",
]


def _tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under root with its mode, size and mtime: a change detector."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            out[str(path.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


class ToolConformance:
    """Provide ``tool``; optionally ``calls`` (default: the declaration's examples)
    and ``ctx`` (default: an empty temporary directory as cwd and cage).

    Checks: the declaration registers; it round-trips as JSON; there are example
    calls and each fits ``args_schema`` in full (types, enums, patterns, bounds, with
    the validator the pipeline uses); dry-runs change nothing on disk, preview every
    effect, are deterministic, and at least one of them succeeds (a tool whose every
    dry-run errors could never be approved). If the examples need files, give them a
    ``ctx`` that has them."""

    @pytest.fixture
    def tool(self) -> Any:
        raise NotImplementedError("override the `tool` fixture to return your tool")

    @pytest.fixture
    def calls(self, tool: Any) -> list[ToolCall]:
        name = tool.declaration.name
        return [ToolCall(tool=name, args=dict(args)) for args in tool.declaration.examples]

    @pytest.fixture
    def ctx(self, tmp_path: Path) -> ToolContext:
        return ToolContext(cwd=str(tmp_path), cages=(str(tmp_path),))

    def test_declaration_is_valid(self, tool: Any) -> None:
        assert validate("tools", tool) == tool.declaration.name

    def test_declaration_round_trips_as_json(self, tool: Any) -> None:
        declaration = tool.declaration
        assert decode(encode(declaration), ToolDeclaration) == declaration

    def test_has_example_calls(self, tool: Any, calls: list[ToolCall]) -> None:
        assert calls, f"tool {tool.declaration.name!r} declares no examples"

    def test_examples_fit_the_schema(self, tool: Any, calls: list[ToolCall]) -> None:
        """Against the whole JSON Schema, as the pipeline will check a planned call."""
        schema = tool.declaration.args_schema
        for call in calls:
            errors = schema_errors(schema, call.args)
            assert not errors, f"example {call.args} does not fit args_schema: {errors}"

    @pytest.mark.anyio
    async def test_some_dry_run_succeeds(
        self, tool: Any, calls: list[ToolCall], ctx: ToolContext
    ) -> None:
        """A dry-run that always errors passes every other check and helps nobody."""
        results = [await tool.dry_run(call, ctx) for call in calls]
        assert any(r.status == "dry_run" for r in results), (
            f"every dry-run of {tool.declaration.name} failed "
            f"({'; '.join(f'{r.status}: {r.stderr[:100]}' for r in results)}): fix the "
            "tool, or override the `ctx` fixture (files the examples need) or `calls`")

    @pytest.mark.anyio
    async def test_dry_run_previews_and_changes_nothing(
        self, tool: Any, calls: list[ToolCall], ctx: ToolContext
    ) -> None:
        before = _tree(Path(ctx.cwd))
        for call in calls:
            result = await tool.dry_run(call, ctx)
            assert result.tool == call.tool
            assert result.status in ("dry_run", "error", "denied"), result
            if tool.declaration.safety.level != "read" and result.status == "dry_run":
                assert result.dry_run_diff, "a tool with effects must preview them"
        assert _tree(Path(ctx.cwd)) == before, "dry_run changed the filesystem"

    @pytest.mark.anyio
    async def test_dry_run_is_deterministic(
        self, tool: Any, calls: list[ToolCall], ctx: ToolContext
    ) -> None:
        """Approvals bind to the preview's hash: the same call must preview the same."""
        for call in calls:
            first = await tool.dry_run(call, ctx)
            second = await tool.dry_run(call, ctx)
            assert first.dry_run_diff == second.dry_run_diff


class ProviderConformance:
    """Provide ``provider`` ready to answer ``completion_request`` (override it if needed)
    twice: the suite asks more than once."""

    @pytest.fixture
    def provider(self) -> Any:
        raise NotImplementedError("override the `provider` fixture")

    @pytest.fixture
    def completion_request(self) -> CompletionRequest:
        return CompletionRequest(prompt="Say hello.", max_tokens=16)

    def test_registers(self, provider: Any) -> None:
        assert validate("providers", provider) == provider.name

    @pytest.mark.anyio
    async def test_streams_text_then_finishes(
        self, provider: Any, completion_request: CompletionRequest
    ) -> None:
        try:
            chunks = [chunk async for chunk in provider.complete(completion_request)]
        finally:
            await provider.aclose()
        assert chunks
        assert all(isinstance(c, CompletionChunk) for c in chunks)
        assert chunks[-1].finish_reason is not None
        assert all(c.finish_reason is None for c in chunks[:-1])

    @pytest.mark.anyio
    async def test_stream_can_be_abandoned(
        self, provider: Any, completion_request: CompletionRequest
    ) -> None:
        stream = provider.complete(completion_request)
        try:
            async for _ in stream:
                break
            await stream.aclose()  # interrupting generation must not raise
        finally:
            await provider.aclose()

    @pytest.mark.anyio
    async def test_usable_again_after_aclose(
        self, provider: Any, completion_request: CompletionRequest
    ) -> None:
        """aclose frees resources; a later request opens them again (presets switch)."""
        await provider.aclose()
        try:
            chunks = [chunk async for chunk in provider.complete(completion_request)]
        finally:
            await provider.aclose()
        assert chunks[-1].finish_reason is not None

    @pytest.mark.anyio
    async def test_aclose_is_idempotent(self, provider: Any) -> None:
        await provider.aclose()
        await provider.aclose()


class KeyValueStoreConformance:
    """Provide ``store``: a fresh, empty key/value store."""

    @pytest.fixture
    def store(self) -> Any:
        raise NotImplementedError("override the `store` fixture")

    def test_registers(self, store: Any) -> None:
        assert validate("stores", store) == f"kv:{store.name}"

    @pytest.mark.anyio
    async def test_put_get_overwrite_delete(self, store: Any) -> None:
        assert await store.get("missing") is None
        await store.put("k", b"one")
        await store.put("k", b"two")
        assert await store.get("k") == b"two"
        assert await store.delete("k") is True
        assert await store.delete("k") is False
        assert await store.get("k") is None

    @pytest.mark.anyio
    async def test_values_are_bytes_exact(self, store: Any) -> None:
        blob = bytes(range(256)) * 4096  # 1 MiB, every byte value
        await store.put("blob/ünïcode key", blob)
        assert await store.get("blob/ünïcode key") == blob

    @pytest.mark.anyio
    async def test_scan_prefix_in_key_order(self, store: Any) -> None:
        for key in ("b/2", "a/1", "b/1", "c"):
            await store.put(key, key.encode())
        assert [k async for k, _ in store.scan("b/")] == ["b/1", "b/2"]
        assert [k async for k, _ in store.scan()] == ["a/1", "b/1", "b/2", "c"]


class LogStoreConformance:
    """Provide ``store``: a fresh, empty append-only log."""

    @pytest.fixture
    def store(self) -> Any:
        raise NotImplementedError("override the `store` fixture")

    def test_registers(self, store: Any) -> None:
        assert validate("stores", store) == f"log:{store.name}"

    @pytest.mark.anyio
    async def test_append_returns_consecutive_indexes(self, store: Any) -> None:
        assert [await store.append(b"r%d" % i) for i in range(5)] == [0, 1, 2, 3, 4]

    @pytest.mark.anyio
    async def test_append_many_is_one_ordered_batch(self, store: Any) -> None:
        """Optional (``append_many``): several records in one durable commit."""
        if not hasattr(store, "append_many"):
            pytest.skip("this store has no append_many")
        await store.append(b"first")
        assert await store.append_many([b"a", b"b", b"c"]) == [1, 2, 3]
        assert await store.append_many([]) == []
        with pytest.raises(TypeError):
            await store.append_many([b"ok", "not bytes"])
        assert [r async for _, r in store.read()] == [b"first", b"a", b"b", b"c"]

    @pytest.mark.anyio
    async def test_read_back_exact_from_any_start(self, store: Any) -> None:
        records = [b"", b"\x00\xff binary", "ünïcode".encode(), b"x" * 100_000]
        for record in records:
            await store.append(record)
        assert [r async for _, r in store.read()] == records
        assert [(i, r) async for i, r in store.read(2)] == [(2, records[2]), (3, records[3])]
        assert [r async for _, r in store.read(10)] == []


class PolicyConformance:
    """Provide ``policy`` and ``requests`` (a list of `PolicyRequest` to judge).

    Verdicts must be explained and deterministic; ``abstain`` is a valid answer."""

    @pytest.fixture
    def policy(self) -> Any:
        raise NotImplementedError("override the `policy` fixture")

    @pytest.fixture
    def requests(self) -> list[PolicyRequest]:
        raise NotImplementedError("override the `requests` fixture")

    def test_registers(self, policy: Any) -> None:
        assert validate("policies", policy) == policy.name

    @pytest.mark.anyio
    async def test_verdicts_are_explained_and_stable(
        self, policy: Any, requests: list[PolicyRequest]
    ) -> None:
        assert requests, "give the suite at least one request to judge"
        for request in requests:
            first = await policy.evaluate(request)
            assert isinstance(first, Verdict)
            assert first.decision in ("allow", "ask", "deny", "abstain")
            if first.decision != "abstain":
                assert first.reason.strip(), "every verdict must say why"
            again = await policy.evaluate(request)
            assert again.decision == first.decision, "verdicts must be deterministic"


class ContextProviderConformance:
    """Provide ``context_provider``; ``cwd`` defaults to a temporary directory."""

    @pytest.fixture
    def context_provider(self) -> Any:
        raise NotImplementedError("override the `context_provider` fixture")

    @pytest.fixture
    def cwd(self, tmp_path: Path) -> str:
        return str(tmp_path)

    def test_registers(self, context_provider: Any) -> None:
        assert validate("context_providers", context_provider) == context_provider.name

    @pytest.mark.anyio
    async def test_contributes_valid_bulletin_fields(self, context_provider: Any, cwd: str) -> None:
        fields = dict(await context_provider.gather(cwd))
        allowed = set(ContextBulletin.__struct_fields__) - {"cwd"}
        assert set(fields) <= allowed, f"unknown bulletin fields {set(fields) - allowed}"
        bulletin = convert({"cwd": cwd, **msgspec.to_builtins(fields)}, ContextBulletin)
        assert bulletin.cwd == cwd

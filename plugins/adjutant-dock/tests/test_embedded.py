"""One smoke test on the embedded model (llama.cpp, the shipped weights): a request
through the dock streams the real model's tokens and ends with exactly one terminal
event. Propose-only: whatever it plans is shown, nothing runs."""

from __future__ import annotations

import httpx
import pytest
from dockkit import read, run_input, start_dock

pytestmark = pytest.mark.anyio
llamacpp = pytest.importorskip("adjutant_llamacpp")
files = pytest.importorskip("adjutant_files")


async def test_the_embedded_model_streams_through_the_dock() -> None:
    from adjutant import ModelPreset, Profile

    profile = Profile(model=ModelPreset(provider="llama-cpp", context_size=2048,
                                        temperature=0.0))
    async with start_dock(mode="propose-only", plugins=(llamacpp, files),
                          profile=profile, ping_s=5) as dock:
        (dock.harness.workspace / "notes.txt").write_text("buy milk\n")
        request = dock.client.build_request(
            "POST", "/api/copilot/run", json=run_input("what files are in this folder?"),
            timeout=httpx.Timeout(10, read=600))  # loading the model takes a while
        stream = await read(await dock.client.send(request, stream=True))
        provider = dock.harness.kernel.providers["llama-cpp"]
        await provider.aclose()
    deltas = [e["data"]["delta"] for e in stream.envelopes if e["event"] == "text_delta"]
    assert len(deltas) > 3  # the model's own tokens, streamed
    terminals = [t for t in stream.types if t in ("RUN_FINISHED", "RUN_ERROR")]
    assert terminals == ["RUN_FINISHED"], stream.envelopes[-1]
    assert stream.envelopes[-1]["data"]["result"]["status"] in ("proposed", "answered")
    assert not [e for e in stream.envelopes if e["event"] == "tool_call_start"]

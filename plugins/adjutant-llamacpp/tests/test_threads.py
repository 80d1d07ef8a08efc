"""The thread count follows the load and never changes a plan: the same batches give
the same logits with any number of threads, so the provider can choose per request
(`_cores`), and its caches are shared whatever the count."""

from __future__ import annotations

import os
import time
from contextlib import aclosing

import pytest

from adjutant_hookspecs import CompletionRequest
from adjutant_llamacpp import LlamaCpp
from adjutant_llamacpp._cores import IdleCores, threads_for

pytestmark = pytest.mark.anyio

PROMPT = "User: list the python processes, then show the last 3 commits\nAssistant: {\""


def test_the_same_batches_give_the_same_logits_with_any_thread_count() -> None:
    import numpy as np

    provider = LlamaCpp(context_size=512, threads=1)
    llama = provider._llama(None)
    tokens = llama.tokenize(PROMPT.encode())
    rows = {}
    for count in (1, 2, 3):
        llama._ctx.set_n_threads(count, count)
        llama.reset()
        for start in range(0, len(tokens) - 1, 8):  # several batches, as `hold` evaluates
            llama.eval(tokens[start:min(start + 8, len(tokens) - 1)])
        llama.eval(tokens[-1:])  # and a single token, as each sampled token is
        rows[count] = np.array(llama.scores[llama.n_tokens - 1], copy=True)
    assert np.array_equal(rows[1], rows[2]) and np.array_equal(rows[1], rows[3])


async def test_all_model_work_runs_in_one_thread() -> None:
    """Loading, scoring and generating, request after request, decode in one thread:
    OpenMP gives every thread that runs the model its own helpers, which then compete
    (a sampled token took about 85 ms instead of 60 once a second thread had run it)."""
    import threading

    provider = LlamaCpp(context_size=512, prefix_cache=False)
    request = CompletionRequest(prompt="Name a colour:", max_tokens=3, temperature=0.0)
    try:
        await provider.prepare(None)
        llama = provider._llama(None)
        decode, seen = llama._ctx.decode, set()

        def recorded(batch):
            seen.add(threading.get_ident())
            return decode(batch)

        llama._ctx.decode = recorded
        for _ in range(2):
            await provider.score(request, [" red", " blue"])
            async with aclosing(provider.complete(request)) as stream:
                assert "".join([c.text async for c in stream])
        assert len(seen) == 1 and threading.get_ident() not in seen
    finally:
        await provider.aclose()


async def test_the_model_thread_reports_failures_and_skips_a_job_left_before_its_turn(
) -> None:
    import anyio

    from adjutant_llamacpp._thread import ModelThread

    thread, ran = ModelThread(), []

    def fail() -> None:
        raise ValueError("bad batch")

    with pytest.raises(ValueError, match="bad batch"):
        await thread.run(fail)
    blocker = thread.submit(lambda: time.sleep(0.3))
    with anyio.move_on_after(0.05):
        await thread.run(lambda: ran.append("late"))  # queued behind the blocker
    await anyio.to_thread.run_sync(blocker.result)
    assert await thread.run(lambda: ran.append("next") or 42) == 42
    assert ran == ["next"]  # the job whose caller left never ran; the thread goes on


def test_threads_are_the_cores_left_whole() -> None:
    assert threads_for(2, 0.0) == 2
    assert threads_for(2, 0.1) == 2  # a little noise: a spinning thread tolerates it
    assert threads_for(2, 0.5) == 1
    assert threads_for(2, 3.5) == 1  # never none
    assert threads_for(8, 2.0) == 6
    assert threads_for(1, 0.0) == 1


#: A process that keeps a core busy for 0.8 s: a program of its own (a test function
#: pickled into a spawned process named a module the child could not import under some
#: import modes, so the "busy" machine was idle and only the load average had said busy).
_SPIN = "import time\nend = time.monotonic() + 0.8\nwhile time.monotonic() < end:\n    pass\n"


def test_a_busy_machine_gets_one_thread() -> None:
    import subprocess
    import sys

    cores = IdleCores()
    spinners = [subprocess.Popen([sys.executable, "-c", _SPIN])
                for _ in range(os.cpu_count() or 2)]
    try:
        time.sleep(0.6)  # the window: every core busy with another process
        assert cores.threads() == 1
    finally:
        for spinner in spinners:
            spinner.wait()


def test_a_window_too_short_to_measure_keeps_the_last_count() -> None:
    cores = IdleCores()
    cores.last = 7
    assert cores.threads() == 7  # right after the last request began


async def test_a_request_says_its_threads_and_plans_alike_with_any(tmp_path) -> None:
    request = CompletionRequest(prompt="Name a colour:", max_tokens=3, temperature=0.0)
    answers = []
    for count in (1, 2):
        provider = LlamaCpp(context_size=512, threads=count, prefix_cache=False)
        try:
            async with aclosing(provider.complete(request)) as stream:
                answers.append("".join([c.text async for c in stream]))
            assert provider.timings["threads"] == count
            scores = await provider.score(request, [" red", " blue", " green"])
            answers.append(repr(scores))
        finally:
            await provider.aclose()
    assert answers[0] == answers[2] and answers[1] == answers[3]


def _scripted_cores(monkeypatch, load: float):
    """An `IdleCores` on a scripted clock and CPU counters: ``request(seconds, own,
    others)`` asks for threads, then lets a request take ``seconds`` with this process
    using ``own`` CPU seconds and the others ``others`` cores' worth."""
    from adjutant_llamacpp import _cores

    clock, busy, own = [100.0], [50.0], [10.0]
    monkeypatch.setattr(_cores.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(_cores, "_busy_seconds", lambda: busy[0])
    monkeypatch.setattr(_cores, "_own_seconds", lambda: own[0])
    monkeypatch.setattr(_cores.os, "getloadavg", lambda: (load, load, load))
    cores = IdleCores(cores=2)

    def advance(seconds: float, own_seconds: float, others: float) -> None:
        clock[0] += seconds
        own[0] += own_seconds
        busy[0] += own_seconds + others * seconds

    def request(seconds: float, own_seconds: float, others: float) -> int:
        threads = cores.threads()
        advance(seconds, own_seconds, others)
        return threads

    return advance, request


def test_only_a_new_process_on_a_busy_machine_counts_the_load_average(monkeypatch) -> None:
    """The load average is read on the process's first short window only, and only when
    something ran beside it: later, it is mostly this process's own last requests, and
    an idle machine must get every core."""
    advance, request = _scripted_cores(monkeypatch, load=1.9)
    advance(1.0, 1.0, 0.3)  # the process's start, loading the model; a job beside it
    assert request(1.5, 3.0, 0.0) == 1  # the first window: the load average counts
    assert request(1.5, 3.0, 0.0) == 2  # a warm request on an idle machine: both cores
    assert request(1.5, 1.5, 1.4 / 1.5) == 2  # measured at its start: idle before
    assert request(1.5, 1.5, 0.0) == 1  # another process kept a core busy the last window


def test_a_new_process_on_a_machine_idle_all_through_its_start_gets_every_core(
        monkeypatch) -> None:
    """A load average the last request's process left (consecutive `adjutant run`s)
    does not cost the next one a core: its start saw nothing else running."""
    advance, request = _scripted_cores(monkeypatch, load=1.9)
    advance(0.7, 0.9, 0.05)  # the start: daemons' noise only
    assert request(1.5, 3.0, 0.0) == 2


def test_children_waited_for_are_this_process_own_cpu() -> None:
    """The context's git runs in child processes during a new process's start: their
    CPU is ours, not another job's, or a cold start would see a busy machine."""
    import subprocess
    import sys

    from adjutant_llamacpp._cores import _own_seconds

    before = _own_seconds()
    subprocess.run([sys.executable, "-c",
                    "import time\nend = time.process_time() + 0.3\n"
                    "while time.process_time() < end: pass"], check=True)
    assert _own_seconds() - before >= 0.25

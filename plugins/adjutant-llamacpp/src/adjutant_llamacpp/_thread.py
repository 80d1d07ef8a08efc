"""The one thread that runs a provider's model work: loads, scoring, generation.

ggml's CPU backend parallelises with OpenMP, and OpenMP gives every OS thread that
starts parallel work its own team of helper threads. Once a second thread that stays
alive has run a model, the teams compete for the cores: on two cores a sampled token
took 81 ms instead of 53-57, a 16-token batch 250-265 ms instead of 225-231
(`bench/model_thread.py`). anyio's pool for scoring and a new thread per generation
made every request pay that. So all of it runs here, one job at a time, in one
long-lived daemon thread (made again in a forked child, where the parent's thread
does not exist)."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["ModelThread"]

T = TypeVar("T")


class ModelThread:
    """Jobs run one at a time, in submission order, in one thread (`submit`, `run`)."""

    def __init__(self, name: str = "adjutant-llamacpp") -> None:
        self.name = name
        self._pid: int | None = None
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] | None = None
        self._start = threading.Lock()

    def submit(self, job: Callable[[], T]) -> Future[T]:
        """Queue ``job``; its future holds what it returned or raised."""
        future: Future[T] = Future()
        self._queue().put((future, job))
        return future

    async def run(self, job: Callable[[], T]) -> T:
        """``job``'s result, awaited without blocking the event loop. A cancelled
        caller returns at once: a job not started yet never runs, one started ends in
        the thread (the model is never left mid-decode) before the next begins."""
        import anyio

        future = self.submit(job)
        try:
            return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        finally:
            future.cancel()  # a no-op once started

    def _queue(self) -> queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]]:
        with self._start:
            if self._jobs is None or self._pid != os.getpid():
                self._pid, self._jobs = os.getpid(), queue.SimpleQueue()
                threading.Thread(target=self._serve, args=(self._jobs,), name=self.name,
                                 daemon=True).start()
            return self._jobs

    @staticmethod
    def _serve(jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]]) -> None:
        while True:
            future, job = jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = job()
            except BaseException as exc:  # the caller's to see, never the thread's end
                future.set_exception(exc)
            else:
                future.set_result(result)

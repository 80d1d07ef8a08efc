"""How many threads a request gets: the cores no other process is using.

ggml's threads spin while they wait for each other, so a thread on a core another
process wants costs far more than it brings (a scoring pass took 48 to 95 s with two
threads on a busy 2-core machine, 9 s with one), while on an idle machine two threads
score in 0.75 s what one does in 1.05 s. The thread count does not change the numbers
(the same batches give bit-identical logits with 1 to 4 threads: a test holds it), so
it can follow the load request by request without a plan changing.

The load is read from ``/proc/stat``: the CPU time every process used since the last
request began, less this process's own (its spinning threads and the children it
waited for, such as the context's git, included), over the cores' time in that window.
A new process's first window is its own start, under a second: a machine idle all
through it is taken as idle; one doing anything is judged by the last minute's load
average too, as a short window can fall in a pause of a job that comes back."""

from __future__ import annotations

import os
import time

__all__ = ["IdleCores", "threads_for"]

#: A window shorter than this (the reply right after its own scoring) keeps the last
#: decision: too short to measure anything.
_MIN_WINDOW_S = 0.3
#: A shorter first window (the process's own start) is checked against the load
#: average as well, unless other processes used less than `_IDLE_CORES` in it.
_SURE_WINDOW_S = 3.0
#: Cores' worth of CPU other processes may use in a start window still called idle:
#: the noise of an idle machine (daemons, the terminal), under what a job uses.
_IDLE_CORES = 0.15


def threads_for(cores: int, others: float) -> int:
    """Threads for a request when other processes keep ``others`` cores busy: the
    cores left whole (a core 80% free is taken, a spinning thread tolerates a little)."""
    return max(1, min(cores, int(cores - max(others, 0.0) + 0.2)))


def _busy_seconds() -> float | None:
    """CPU seconds every process has used since boot (``/proc/stat``), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _own_seconds() -> float:
    """CPU seconds of this process and of the children it has waited for."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class IdleCores:
    """Threads for the next request, measured at its start (`threads`).

    Where ``/proc/stat`` cannot be read, half the cores: what the provider used
    before it measured."""

    def __init__(self, cores: int | None = None) -> None:
        self.cores = max(cores or os.cpu_count() or 2, 1)
        self.last = max(self.cores // 2, 1)
        self._since = (time.monotonic(), _busy_seconds(), _own_seconds())
        self._started = True  # the next window is the process's own start

    def threads(self) -> int:
        now = (time.monotonic(), _busy_seconds(), _own_seconds())
        elapsed = now[0] - self._since[0]
        if now[1] is None or self._since[1] is None:
            return self.last
        if elapsed < _MIN_WINDOW_S:
            return self.last
        others = (now[1] - self._since[1] - (now[2] - self._since[2])) / elapsed
        if self._started and elapsed < _SURE_WINDOW_S and others >= _IDLE_CORES:
            # a new process on a machine doing something: the window is its own start,
            # too short to see a job that pauses now and then (a test suite, another
            # model); the last minute's load average, ours barely in it yet, says more.
            # Not on a machine idle all through the start: the load average is then
            # mostly what finished (the last request's process), and the first request
            # on one thread took half as long again. Not in a warm session either: the
            # load average is then mostly this process's own last requests (it gave
            # every warm request one thread on an idle machine)
            others = max(others, os.getloadavg()[0])
        self._started = False
        self._since = now
        self.last = threads_for(self.cores, others)
        return self.last

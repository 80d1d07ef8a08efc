"""Run a subprocess under bubblewrap: what a tool's command may touch is decided by the
kernel, not by string checks.

Every child runs with a read-only root, a fresh ``/tmp``, only the given
directories writable, no network (its own empty network namespace) unless asked,
its own pid/ipc/uts namespaces, no new privileges, all capabilities dropped, a
clean allow-listed environment, resource limits, a pids limit where cgroups allow
one, output capped with a visible marker, binary output and terminal escapes
neutralised, and the whole sandbox killed at the timeout (the pid namespace dies
with its first process, so nothing survives: not ``setsid``, not a double fork). It
also dies with Adjutant, whenever Adjutant is killed: PR_SET_PDEATHSIG is set in the
child before anything else runs, with a check that Adjutant had not died already
(`_guarded`), and pids cgroups left by a killed Adjutant are emptied and removed before
the next process's first sandboxed run (`remove_stale_cgroups`).

A writable cage does not make what protects the user writable: the deny rules
(`adjutant.safety.protection`) become mounts after the cage binds (`sandbox_layout`, in
``safety._layout``): secrets and Adjutant's data home hidden from every command,
git's hooks and config, shell start-up files, MCP configs and the like read-only.

`preview` gives the exact effect description a tool's dry-run should show.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ._layout import Layout, sandbox_layout
from .processes import started as _started_at
from .regular import read_regular

if TYPE_CHECKING:
    from .protection import Shield

__all__ = ["Layout", "SandboxResult", "SandboxUnavailableError", "available", "clean_text",
           "preview", "remove_stale_cgroups", "repository_dirs", "run", "sandbox_layout",
           "stale_cgroups"]

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MAX_OUTPUT = 1 << 20
TRUNCATED = "\n[... output truncated by Adjutant at {limit} bytes ...]\n"
#: Never passed to a child, whatever the caller asks.
_DENY_ENV = re.compile(r"^(LD_|DYLD_|PYTHON|PERL5?LIB|RUBYLIB|NODE_OPTIONS|BASH_ENV$|ENV$|"
                       r"GIT_|SSH_|GPG_|AWS_|.*(TOKEN|SECRET|PASSWORD|API_?KEY|CREDENTIAL))")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class SandboxUnavailableError(RuntimeError):
    """bubblewrap is missing or cannot create namespaces here."""


@attrs.frozen
class SandboxResult:
    argv: tuple[str, ...]
    cwd: str
    returncode: int | None
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool = False
    truncated: bool = False
    binary: bool = False


def available() -> str | None:
    """None when sandboxed runs work here, else why not (and what to do)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    return None


def preview(argv: Sequence[str], *, cwd: str, writable: Sequence[str] = (),
            network: bool = False, timeout: float = 30.0) -> str:
    """The exact description of a sandboxed run, for a dry-run (approvals bind to it)."""
    import shlex

    lines = [f"run: {shlex.join(argv)}", f"cwd: {cwd}",
             f"writable: {', '.join(writable) if writable else 'nothing'}",
             f"network: {'yes' if network else 'no'}", f"timeout: {timeout:g}s"]
    return "\n".join(lines)



def _first_line(path: str) -> str:
    """The first line of a small file git wrote (``.git``, ``commondir``); a FIFO or
    device under that name is refused (`open_regular`), not waited on."""
    try:
        return read_regular(path, 4096).decode("utf-8", "replace").partition("\n")[0].strip()
    except OSError:
        return ""


def repository_dirs(cwd: str) -> list[str]:
    """The work tree (and a linked worktree's git and common directories) above ``cwd``,
    found by reading ``.git``, never by running anything; empty outside a repository.

    Pass them as ``readable=`` so a sandboxed git sees its repository even where the
    sandbox hides the host (a fresh ``/tmp``)."""
    here = os.path.realpath(cwd)
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            return [here]
        if os.path.isfile(dot):
            found = [here]
            line = _first_line(dot)
            if line.startswith("gitdir:"):
                git_dir = os.path.join(here, line.removeprefix("gitdir:").strip())
                found.append(git_dir)
                common = os.path.join(git_dir, "commondir")
                if os.path.isfile(common):
                    found.append(os.path.join(git_dir, _first_line(common)))
            return found
        parent = os.path.dirname(here)
        if parent == here:
            return []
        here = parent


def clean_text(data: bytes) -> tuple[str, bool]:
    """Text safe to show: escapes and control characters removed; binary summarised."""
    if b"\x00" in data[:8192]:
        return f"<binary output, {len(data)} bytes>", True
    text = data.decode("utf-8", errors="replace")
    return _CONTROL.sub("", _ESCAPES.sub("", text)), False


def _environment(extra: Mapping[str, str] | None, home: str,
                 unchecked: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {"PATH": DEFAULT_PATH, "HOME": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "TERM": "dumb", "NO_COLOR": "1"}
    for name, value in (extra or {}).items():
        if not _ENV_NAME.match(name) or _DENY_ENV.match(name.upper()):
            raise ValueError(f"environment variable {name!r} may not be passed to a sandbox")
        env[name] = value
    for name, value in (unchecked or {}).items():
        if not _ENV_NAME.match(name) or "\x00" in value:
            raise ValueError(f"environment variable {name!r} is malformed")
        env[name] = value
    return env


def _bwrap_argv(argv: Sequence[str], cwd: str, writable: Sequence[str], network: bool,
                env: Mapping[str, str], readable: Sequence[str] = (),
                layout: Layout | None = None, shield: Shield | None = None) -> list[str]:
    """The bubblewrap command line. With ``layout``, the protected paths' mounts
    (`sandbox_layout` for ``shield``, else the process's home) follow the cage binds,
    and ``layout`` keeps what `Layout.close` undoes once the sandbox is gone."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailableError(available() or "bubblewrap is unavailable")
    cmd = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
           "--tmpfs", "/tmp", "--tmpfs", "/run"]
    real_cwd = os.path.realpath(cwd)
    if not os.path.isdir(real_cwd):
        raise ValueError(f"cwd {cwd!r} is not an existing directory")
    # The cwd first (visible even under the fresh /tmp), then the writable cages, so a
    # cage inside the cwd is mounted over it and not hidden by it.
    cmd += ["--ro-bind", real_cwd, real_cwd]
    for path in readable:  # visible even under the fresh /tmp (a repository above the cwd)
        real = os.path.realpath(path)
        if os.path.exists(real):
            cmd += ["--ro-bind", real, real]
    cages = []
    for path in writable:
        real = os.path.realpath(path)
        if not os.path.isdir(real):
            raise ValueError(f"writable path {path!r} is not an existing directory")
        cmd += ["--bind", real, real]
        cages.append(real)
    if layout is not None:
        if shield is None:  # the process's own home and data home
            from ..kernel._paths import data_home
            from .protection import Shield

            shield = Shield(data_home=str(data_home()))
        planned = sandbox_layout(shield, cages, [real_cwd, *readable])
        layout.absorb(planned)
        cmd += planned.args
    cmd += ["--unshare-user-try", "--unshare-ipc", "--unshare-pid", "--unshare-uts",
            "--unshare-cgroup-try"]
    if not network:
        cmd.append("--unshare-net")
    cmd += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    for name, value in env.items():
        cmd += ["--setenv", name, value]
    cmd += ["--chdir", real_cwd, "--", *argv]
    return cmd


def _limits(cpu_s: int, file_bytes: int, processes: int) -> list[str]:
    """``prlimit`` in front of bubblewrap: CPU time, file size, processes (for
    ordinary users; uid 0 is exempt from RLIMIT_NPROC, see `_PidsCgroup`), no cores."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return []
    return [prlimit, f"--cpu={cpu_s}", f"--fsize={file_bytes}", f"--nproc={processes}",
            "--core=0", "--"]


class _PidsCgroup:
    """A pids cgroup capping how many processes the sandbox may have, where the host
    lets us make one (root, or a delegated cgroup). RLIMIT_NPROC does the same for
    ordinary users but is ignored for uid 0, hence this.

    Named ``adjutant-<pid>-<n>-s<start>`` (this process's pid and start time): one
    left behind by a process that was killed is found by `remove_stale_cgroups`."""

    ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")

    def __init__(self, limit: int) -> None:
        self.path: str | None = None
        owner = f"adjutant-{os.getpid()}-{time.monotonic_ns()}-s{_started_at(os.getpid()) or 0}"
        for root in self.ROOTS:
            candidate = os.path.join(root, owner)
            try:
                os.mkdir(candidate)
                with open(os.path.join(candidate, "pids.max"), "w") as handle:
                    handle.write(str(limit))
            except OSError:
                with contextlib.suppress(OSError):
                    os.rmdir(candidate)
                continue
            self.path = candidate
            return

    def close(self) -> None:
        """Kill whatever is still in the cgroup, then remove it."""
        if self.path is not None:
            _empty_and_remove(self.path)


def _empty_and_remove(path: str) -> bool:
    """Kill every process in the cgroup ``path`` and remove it; False if it stays."""
    procs = os.path.join(path, "cgroup.procs")
    kill = os.path.join(path, "cgroup.kill")  # cgroup v2 (Linux 5.14): all at once
    for _ in range(200):
        if os.path.exists(kill):
            with contextlib.suppress(OSError), open(kill, "w") as handle:
                handle.write("1")
        try:
            with open(procs) as handle:
                pids = [int(line) for line in handle if line.strip()]
        except OSError:
            pids = []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.01)
    return False


_CGROUP_NAME = re.compile(r"^adjutant-(\d+)-\d+(?:-s(\d+))?$")
_stale_checked = False


def stale_cgroups() -> list[str]:
    """The pids cgroups left by Adjutant processes that no longer run (killed before
    they could remove their own); `adjutant doctor` names them."""
    return _stale(remove=False)


def remove_stale_cgroups() -> list[str]:
    """Remove the pids cgroups left by Adjutant processes that no longer run, killing
    anything still in them; returns the paths removed. Called once per process,
    before its first sandboxed run, and by `adjutant doctor`; cheap (one directory
    listing per cgroup root)."""
    return _stale(remove=True)


def _stale(*, remove: bool) -> list[str]:
    found = []
    for root in _PidsCgroup.ROOTS:
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            match = _CGROUP_NAME.match(name)
            if match is None:
                continue
            pid, start = int(match[1]), int(match[2]) if match[2] else None
            now = _started_at(pid)
            if now is not None and (not start or now == start):
                continue  # its owner still runs (a reused pid with the old naming: kept)
            path = os.path.join(root, name)
            if os.path.isdir(path) and (not remove or _empty_and_remove(path)):
                found.append(path)
    return found


#: Runs first in the sandbox's process, the leader of its own process group, once
#: setpriv has set PR_SET_PDEATHSIG to SIGTERM: if Adjutant died before that, no
#: signal will ever come, so the parent is checked *after* setting it. It joins the
#: cgroup (every descendant is born in it), then stays, as the supervisor, while
#: prlimit and bubblewrap run as its child: when Adjutant dies, the TERM it gets kills
#: the whole group. Exec'ing bubblewrap instead left a window (bubblewrap's issue
#: #633): its own --die-with-parent is set in the sandbox's pid 1 after the clone, so
#: a kill landing in between left pid 1 and the command running under init. The
#: command's status is passed on, a death by signal as the same signal.
_GUARD = (
    # t: stop the tree under $1 (a stopped process cannot fork), then k: kill it, the
    # deepest first. bubblewrap's pid 1 calls setsid(), so the group alone misses it.
    't() { kill -STOP $1 2>/dev/null; for c in $(cat /proc/$1/task/*/children 2>/dev/null); '
    'do t $c; done; }; '
    'k() { for c in $(cat /proc/$1/task/*/children 2>/dev/null); do k $c; done; '
    'kill -KILL $1 2>/dev/null; }; '
    'trap \'for c in $(cat /proc/$$/task/*/children); do t $c; k $c; done; '
    '[ -z "$g" ] || for p in $(cat "$g/cgroup.procs"); do [ $p = $$ ] || kill -KILL $p; done; '
    'kill -KILL 0\' TERM; '
    '[ "$PPID" = "$1" ] || exit 125; g=$2; '
    '[ -z "$2" ] || echo $$ > "$2/cgroup.procs" || exit 125; shift 2; '
    'exec 3<&0; "$@" <&3 3<&- & exec 3<&-; wait $!; s=$?; '
    '[ "$s" -gt 128 ] && trap - TERM && kill -$((s - 128)) $$; exit $s')
#: The same where setpriv is missing (slower: a Python start).
_GUARD_PY = ("import ctypes,os,sys\n"
             "ctypes.CDLL(None, use_errno=True).prctl(1, 15, 0, 0, 0)\n"  # PDEATHSIG: TERM
             "os.getppid() == int(sys.argv[1]) or os._exit(125)\n"
             "os.execv('/bin/sh', ['/bin/sh', '-c', sys.argv[3], 'adjutant-sandbox', "
             "sys.argv[1], *sys.argv[2:3], *sys.argv[4:]])\n")


def _guarded(cmd: list[str], cgroup: str | None) -> list[str]:
    """``cmd`` started so that it dies with this process, always: PR_SET_PDEATHSIG
    (SIGTERM) set in the child before anything else runs, then a check that the
    parent is still this process (a kill landing between fork and that call would
    otherwise leave the child reparented to init, running on past its timeout), then
    the guard (`_GUARD`) supervising ``cmd`` in its process group, which it kills when
    that signal comes (bubblewrap's own ``--die-with-parent`` comes too late)."""
    parent, where = str(os.getpid()), cgroup or ""
    setpriv = shutil.which("setpriv")
    if setpriv is not None:
        return [setpriv, "--pdeathsig", "TERM", "--", "/bin/sh", "-c", _GUARD,
                "adjutant-sandbox", parent, where, *cmd]
    import sys

    return [sys.executable, "-S", "-c", _GUARD_PY, parent, where, _GUARD, *cmd]


async def run(
    argv: Sequence[str], *, cwd: str, writable: Sequence[str] = (),
    env: Mapping[str, str] | None = None, timeout: float = 30.0,  # noqa: ASYNC109 - the child's
    max_output: int = MAX_OUTPUT, network: bool = False, stdin: bytes | None = None,
    max_processes: int = 64, max_file_bytes: int = 1 << 30,
    unchecked_env: Mapping[str, str] | None = None, readable: Sequence[str] = (),
    shield: Shield | None = None,
) -> SandboxResult:
    """Run ``argv`` in the sandbox and return its (cleaned, capped) output.

    ``env`` is filtered (no ``LD_*``, ``GIT_*``, secrets...). ``unchecked_env`` is not:
    it is for values a tool's own code sets (the git tools' ``GIT_CONFIG_NOSYSTEM``),
    never for anything taken from a call's arguments. ``readable`` directories are
    bound read-only (the root is read-only anyway; this matters under ``/tmp``).
    ``shield`` carries the deny rules of the call (`Shield.for_context`): the
    protected paths it names stay read-only or hidden inside the sandbox.

    :raises SandboxUnavailableError: bubblewrap is missing.
    :raises ValueError: a forbidden environment variable or a bad writable path.
    """
    import anyio

    if not argv or not all(isinstance(a, str) and "\x00" not in a for a in argv):
        raise ValueError("argv must be a non-empty list of strings without NUL bytes")
    layout = Layout()  # the protected paths' mounts; closed (placeholders gone) at the end
    cmd = _limits(max(1, int(timeout) + 1), max_file_bytes, max_processes) + _bwrap_argv(
        argv, cwd, writable, network, _environment(env, "/tmp", unchecked_env), readable,
        layout, shield)
    global _stale_checked
    if not _stale_checked:
        _stale_checked = True
        remove_stale_cgroups()
    cgroup = _PidsCgroup(max_processes)
    started = time.perf_counter()
    out, err = bytearray(), bytearray()
    truncated = timed_out = False

    process = await anyio.open_process(
        _guarded(cmd, cgroup.path), stdin=None if stdin is None else -1, stdout=-1, stderr=-1,
        start_new_session=True,
    )

    async def pump(stream: Any, buffer: bytearray) -> None:
        nonlocal truncated
        async for chunk in stream:
            room = max_output - len(buffer)
            if room > 0:
                buffer.extend(chunk[:room])
            if len(chunk) > room:
                truncated = True  # keep draining so the child never blocks on a full pipe

    try:
        with anyio.move_on_after(timeout) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump, process.stdout, out)
                tg.start_soon(pump, process.stderr, err)
                if stdin is not None and process.stdin is not None:
                    await process.stdin.send(stdin)
                    await process.stdin.aclose()
                await process.wait()
        timed_out = scope.cancelled_caught
    finally:
        if process.returncode is None:
            # The guard kills the tree under it on SIGTERM (bubblewrap calls setsid, so
            # its processes are not all in the guard's group); SIGKILL to the group after
            # it, or when the guard does not end within a second.
            with anyio.CancelScope(shield=True):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
                with anyio.move_on_after(1.0):
                    await process.wait()
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        with anyio.CancelScope(shield=True):
            await process.aclose()  # close the pipes
        cgroup.close()
        layout.close()
    stdout, binary_out = clean_text(bytes(out))
    stderr, binary_err = clean_text(bytes(err))
    marker = TRUNCATED.format(limit=max_output)
    if truncated:
        stdout += marker
    if timed_out:
        stderr += f"\n[killed by Adjutant after {timeout:g}s]\n"
    return SandboxResult(
        argv=tuple(argv), cwd=cwd, returncode=None if timed_out else process.returncode,
        stdout=stdout, stderr=stderr, duration_ms=int((time.perf_counter() - started) * 1000),
        timed_out=timed_out, truncated=truncated, binary=binary_out or binary_err,
    )

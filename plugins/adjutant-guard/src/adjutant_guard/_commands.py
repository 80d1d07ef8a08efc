"""Privilege escalation in command lines: peel the wrappers, find the real command.

This is a string check and it decides only when to refuse and explain; what a
command can actually do is decided by the sandbox (no-new-privileges, no D-Bus).
The check:

- strips ``VAR=value`` prefixes and peels wrapper programs by parsing their
  options the way they do (joined short options, ``--opt=value``, unambiguous
  long-option abbreviations, ``--``), down to the command they would run;
- compares the command's file name case-insensitively with the escalation
  programs (``/usr/bin/sudo``, ``./sudo`` and ``SUDO`` all count: a case-insensitive
  file system runs ``SUDO`` as ``sudo``, and nothing legitimate is called that);
- for interpreters and programs that run other programs (``bash``, ``python3``,
  ``find``, ``watch``...) refuses when *any* argument mentions an escalation program
  as a word, quotes and backslashes removed: ``bash -c '"$0" id' sudo`` passes the
  name outside the code string. This over-matches (``python3 t.py "su casa"``) on
  purpose;
- for ``git``, refuses when a ``-c`` configuration value mentions one (aliases with
  ``!`` and pagers run shell code);
- when a wrapper's options cannot be parsed it cannot know what runs: refuse if an
  argument mentions an escalation program, otherwise ask.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

__all__ = ["ESCALATION", "CommandCheck", "check_argv", "escalation_name"]

#: Programs that run a command as another user (or ask a privileged service to).
ESCALATION = frozenset(
    {
        "sudo",
        "sudoedit",
        "su",
        "doas",
        "pkexec",
        "run0",
        "systemd-run",
        "machinectl",
        "dzdo",
        "ksu",
        "please",
        "pleaseedit",
        "runuser",
        "sg",
        "newgrp",
        "calife",
    }
)
#: Generic D-Bus clients: they can ask systemd or polkit for what run0 does.
_DBUS = frozenset({"busctl", "dbus-send", "gdbus", "qdbus"})

_SHELLS = frozenset(
    {
        "sh", "bash", "rbash", "zsh", "dash", "ash", "ksh", "ksh93", "mksh", "pdksh", "yash",
        "posh", "fish", "csh", "tcsh", "elvish", "xonsh", "nu", "pwsh", "powershell"
    }
)
_INTERPRETER = re.compile(
    r"(?:python|pypy|perl|ruby|irb|node|nodejs|deno|bun|php|lua|luajit|tclsh|wish|expect"
    r"|awk|gawk|mawk|nawk|julia|rscript|guile|osascript)[0-9.]*(?:-[0-9.]+)?"
)
#: Programs that run other programs in ways not worth parsing: scan all arguments.
_RUNNERS = frozenset(
    {
        "find", "watch", "script", "strace", "ltrace", "valgrind", "gdb", "lldb", "rr", "perf",
        "parallel", "sem", "nsenter", "prlimit", "setpriv", "capsh", "runcon", "cgexec",
        "firejail", "bwrap", "proot", "fakeroot", "fakechroot", "faketime", "systemd-inhibit",
        "dbus-run-session", "caffeinate", "catchsegv", "setarch", "linux32", "linux64",
        "numactl", "schedtool", "cpulimit", "trickle", "torsocks", "proxychains",
        "proxychains4", "tsp", "entr", "screen", "tmux", "daemonize", "start-stop-daemon",
        "unbuffer", "sshpass"
    }
)

_WORD = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(re.escape(n) for n in sorted(ESCALATION | _DBUS, key=len, reverse=True))
    + r")(?![\w-])",
    re.IGNORECASE,
)
_UNQUOTE = str.maketrans("", "", "'\"\\`")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: Wrappers peeled before giving up (a deeper chain is refused).
MAX_DEPTH = 16


@dataclass(frozen=True, slots=True)
class CommandCheck:
    """The outcome for one argv: a decision and reason, or None; the command heads."""

    decision: str | None = None
    reason: str = ""
    #: argv[0] of each layer, outermost first (``["env", "./tool"]``).
    heads: tuple[str, ...] = field(default=())


def escalation_name(name: str) -> str | None:
    """The escalation program a file name stands for (``SUDO`` → ``sudo``), if any."""
    base = name.rsplit("/", 1)[-1].strip().casefold()
    return base if base in ESCALATION or base in _DBUS else None


def check_argv(argv: object) -> CommandCheck:
    """Judge one ``argv``-role argument (a list: a command and its arguments)."""
    if not isinstance(argv, list | tuple) or not argv:
        return CommandCheck("deny", "the command must be a non-empty list of strings")
    if not all(isinstance(a, str) for a in argv):
        return CommandCheck("deny", "every part of the command must be a string")
    if any("\x00" in a for a in argv):
        return CommandCheck("deny", "the command contains a NUL byte")

    args: list[str] = list(argv)
    chain: list[str] = []
    heads: list[str] = []
    for _ in range(MAX_DEPTH):
        while args and _ASSIGNMENT.match(args[0]):
            args = args[1:]  # `VAR=value cmd`, should a tool hand argv to a shell
        if not args:
            return CommandCheck(heads=tuple(heads))
        head, rest = args[0], args[1:]
        heads.append(head)
        name = head.rsplit("/", 1)[-1].strip().casefold()
        via = f" (reached through {' → '.join(chain)})" if chain else ""
        if found := escalation_name(head):
            what = "talks to system services over D-Bus" if found in _DBUS else "runs commands"
            return CommandCheck(
                "deny",
                f"{head} {what} as another user{via}: Adjutant never escalates privileges",
                tuple(heads),
            )
        if name in _SHELLS or _INTERPRETER.fullmatch(name) or name in _RUNNERS:
            if word := _mentions(rest):
                return CommandCheck(
                    "deny",
                    f"{head} is given code or arguments that mention {word}{via}: "
                    "Adjutant never escalates privileges",
                    tuple(heads),
                )
            return CommandCheck(heads=tuple(heads))
        if name == "git":
            # `git -c alias.x='!sudo id' x`, `-c core.pager=...`: config values run code.
            values = [b for a, b in pairwise(rest) if a == "-c"]
            values += [a for a in rest if a.startswith("--config-env")]
            if word := _mentions(values):
                return CommandCheck(
                    "deny",
                    f"{head} is given configuration that runs {word}{via}: "
                    "Adjutant never escalates privileges",
                    tuple(heads),
                )
            return CommandCheck(heads=tuple(heads))
        peel = _WRAPPERS.get(name)
        if peel is None:
            return CommandCheck(heads=tuple(heads))
        try:
            args = peel(rest)
        except _Unparsable as exc:
            if word := _mentions(rest):
                return CommandCheck(
                    "deny",
                    f"{head} {exc} and mentions {word}{via}: Adjutant never escalates privileges",
                    tuple(heads),
                )
            return CommandCheck(
                "ask", f"cannot tell which command {head} runs: it {exc}{via}", tuple(heads)
            )
        chain.append(name)
    return CommandCheck(
        "deny", f"the command is wrapped more than {MAX_DEPTH} levels deep", tuple(heads)
    )


def _mentions(args: Sequence[str]) -> str | None:
    for arg in args:
        for text in (arg, arg.translate(_UNQUOTE)):
            if m := _WORD.search(text):
                return m.group(0)
    return None


# -- wrapper option parsing ------------------------------------------------------------


class _Unparsable(ValueError):
    """A wrapper's arguments do not parse; the message completes "it ..."."""


@dataclass(frozen=True, slots=True)
class _Options:
    """getopt-style option table: ``short`` like ``"n:e::v"`` (``:`` takes a value,
    ``::`` an optional joined one); ``long`` like ``"adjustment=:n"`` (``=`` value,
    ``=?`` optional ``=value``; ``:x`` names the short option it equals)."""

    short: str
    long: tuple[str, ...] = ()
    #: ``nice -10`` / ``nice --10``: a number as an option.
    numeric: bool = False

    def short_kind(self, c: str) -> str | None:
        i = self.short.find(c)
        if i < 0 or c == ":":
            return None
        tail = self.short[i + 1 : i + 3]
        return "optional" if tail == "::" else "required" if tail[:1] == ":" else "none"

    def long_kind(self, given: str) -> tuple[str, str]:
        """(kind, key) of a long option, abbreviations resolved as getopt_long does."""
        table: dict[str, tuple[str, str]] = {}
        for entry in self.long:
            spec, _, alias = entry.partition(":")
            name, eq, opt = spec.partition("=")
            kind = "optional" if opt == "?" else "required" if eq else "none"
            table[name] = (kind, alias or name)
        if given in table:
            return table[given]
        matches = {table[n] for n in table if n.startswith(given)}
        if len(matches) == 1:
            return matches.pop()
        raise _Unparsable(
            f"has an {'ambiguous' if matches else 'unknown'} option --{given}"
        )


Parsed = tuple[list[str], dict[str, list[str]]]


def _parse(opts: _Options, args: list[str]) -> Parsed:
    """Split off the options (stopping at the first operand, as ``+`` getopt does);
    return the operands and the values seen, by short letter or long name."""
    seen: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if opts.numeric and re.fullmatch(r"--?[0-9]+", arg):
            i += 1
            continue
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            kind, key = opts.long_kind(name)
            if kind == "none" and eq:
                raise _Unparsable(f"gives a value to the option --{name}")
            if kind == "required" and not eq:
                if i + 1 >= len(args):
                    raise _Unparsable(f"lacks the value of --{name}")
                i += 1
                value = args[i]
            seen.setdefault(key, []).append(value)
            i += 1
            continue
        if arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                c = arg[j]
                kind_or_none = opts.short_kind(c)
                if kind_or_none is None:
                    raise _Unparsable(f"has an unknown option -{c}")
                if kind_or_none == "none":
                    seen.setdefault(c, []).append("")
                    j += 1
                    continue
                value = arg[j + 1 :]
                if not value and kind_or_none == "required":
                    if i + 1 >= len(args):
                        raise _Unparsable(f"lacks the value of -{c}")
                    i += 1
                    value = args[i]
                seen.setdefault(c, []).append(value)
                break
            i += 1
            continue
        break
    return args[i:], seen


def _simple(opts: _Options, positionals: int = 0) -> Callable[[list[str]], list[str]]:
    """Options, then ``positionals`` operands of its own, then the command."""

    def peel(args: list[str]) -> list[str]:
        rest, _ = _parse(opts, args)
        return rest[positionals:]

    return peel


def _env(args: list[str]) -> list[str]:
    opts = _Options(
        "i0u:C:S:v",
        (
            "ignore-environment:i",
            "null:0",
            "unset=:u",
            "chdir=:C",
            "split-string=:S",
            "debug:v",
            "block-signal=?",
            "default-signal=?",
            "ignore-signal=?",
            "list-signal-handling",
            "help",
            "version",
        ),
    )
    if args[:1] == ["-"]:
        args = args[1:]
    rest, seen = _parse(opts, args)
    while rest and "=" in rest[0]:
        rest = rest[1:]  # env treats every leading NAME=VALUE as an assignment
    if "S" in seen:
        # `env -S "sudo id"` splits its value into the command line.
        import shlex  # only here: rarely needed

        try:
            split = [w for s in seen["S"] for w in shlex.split(s)]
        except ValueError as exc:
            raise _Unparsable(f"has an -S string that does not split ({exc})") from None
        rest = split + rest
    return rest


def _timeout(args: list[str]) -> list[str]:
    opts = _Options(
        "s:k:v",
        ("signal=:s", "kill-after=:k", "preserve-status", "foreground", "verbose:v", "help",
         "version"),
    )
    return _parse(opts, args)[0][1:]  # after DURATION


def _chrt(args: list[str]) -> list[str]:
    opts = _Options(
        "abdefimoprRvT:P:D:hV",
        ("all-tasks:a", "batch:b", "deadline:d", "ext:e", "fifo:f", "idle:i", "max:m",
         "other:o", "pid:p", "rr:r", "reset-on-fork:R", "verbose:v", "sched-runtime=:T",
         "sched-period=:P", "sched-deadline=:D", "help:h", "version:V"),
    )
    rest, seen = _parse(opts, args)
    if "p" in seen or "m" in seen:
        return []  # changes a running process, runs nothing
    return rest[1:] if rest and rest[0].isdigit() else rest


def _ionice(args: list[str]) -> list[str]:
    opts = _Options(
        "c:n:p:P:u:thV",
        ("class=:c", "classdata=:n", "pid=:p", "pgid=:P", "uid=:u", "ignore:t", "help:h",
         "version:V"),
    )
    rest, seen = _parse(opts, args)
    return [] if {"p", "P", "u"} & seen.keys() else rest


def _flock(args: list[str]) -> list[str]:
    opts = _Options(
        "sexunw:E:oFc:hV",
        ("shared:s", "exclusive:x", "unlock:u", "nonblock:n", "nb:n", "timeout=:w", "wait=:w",
         "conflict-exit-code=:E", "close:o", "no-fork:F", "command=:c", "verbose", "help:h",
         "version:V"),
    )
    rest, seen = _parse(opts, args)
    if "c" in seen:
        return ["sh", "-c", *seen["c"]]
    rest = rest[1:]  # the lock file or directory (or a bare fd number: nothing runs)
    if rest[:1] in (["-c"], ["--command"]):
        return ["sh", "-c", *rest[1:2]]
    return rest


def _xargs(args: list[str]) -> list[str]:
    opts = _Options(
        "0a:d:E:e::I:i::L:l::n:P:prs:txo",
        ("null:0", "arg-file=:a", "delimiter=:d", "eof=?:e", "replace=?:i", "max-lines=?:l",
         "max-args=:n", "max-procs=:P", "interactive:p", "process-slot-var=",
         "no-run-if-empty:r", "max-chars=:s", "verbose:t", "exit:x", "open-tty:o",
         "show-limits", "help", "version"),
    )
    return _parse(opts, args)[0] or ["echo"]


def _busybox(args: list[str]) -> list[str]:
    # `busybox APPLET args...`; `busybox --list` and the like run nothing.
    return [] if not args or args[0].startswith("-") else args


def _unshare(args: list[str]) -> list[str]:
    opts = _Options(
        "m::u::i::n::p::U::C::T::frcR:w:S:G:l:hV",
        ("mount=?:m", "uts=?:u", "ipc=?:i", "net=?:n", "pid=?:p", "user=?:U", "cgroup=?:C",
         "time=?:T", "fork:f", "kill-child=?", "mount-proc=?", "map-root-user:r",
         "map-current-user:c", "map-user=", "map-users=", "map-group=", "map-groups=",
         "map-auto", "propagation=", "setgroups=", "root=:R", "wd=:w", "setuid=:S",
         "setgid=:G", "load-interp=:l", "monotonic=", "boottime=", "keep-caps", "help:h",
         "version:V"),
    )
    return _parse(opts, args)[0]


def _taskset(args: list[str]) -> list[str]:
    opts = _Options("acphV", ("all-tasks:a", "cpu-list:c", "pid:p", "help:h", "version:V"))
    rest, seen = _parse(opts, args)
    return [] if "p" in seen else rest[1:]  # after the mask


_WRAPPERS: dict[str, Callable[[list[str]], list[str]]] = {
    "env": _env,
    "nice": _simple(_Options("n:", ("adjustment=:n", "help", "version"), numeric=True)),
    "timeout": _timeout,
    "nohup": _simple(_Options("", ("help", "version"))),
    "stdbuf": _simple(_Options("i:o:e:", ("input=:i", "output=:o", "error=:e", "help",
                                          "version"))),
    "ionice": _ionice,
    "chrt": _chrt,
    "setsid": _simple(_Options("cfw", ("ctty:c", "fork:f", "wait:w", "help", "version"))),
    "time": _simple(_Options("f:o:apvqV", ("format=:f", "output=:o", "append:a",
                                           "portability:p", "verbose:v", "quiet:q", "help",
                                           "version:V"))),
    "command": _simple(_Options("pvV")),
    "builtin": _simple(_Options("")),
    "exec": _simple(_Options("a:cl")),
    "xargs": _xargs,
    "busybox": _busybox,
    "toybox": _busybox,
    "flock": _flock,
    "unshare": _unshare,
    "chroot": _simple(_Options("", ("userspec=", "groups=", "skip-chdir", "help", "version")),
                      positionals=1),
    "taskset": _taskset,
}

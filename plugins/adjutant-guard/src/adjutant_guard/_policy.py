"""`Rules`: the default policy's rules, loaded by `adjutant_guard.Guard` on first use.

Rules, in the order their findings rank among equals (deny beats ask beats allow;
between two findings of the same strength the earlier rule names the reason):

1. the request itself (a call for another tool, schema roles that cannot be read);
2. guardrails: too many steps in the run, the same call a third time;
3. privilege escalation in ``argv``-role arguments;
4. paths (``path``/``paths`` roles): magic links, deny patterns, the tool's own
   ``allowed_paths``, the cages, hard links, executing an escalation program;
5. the network: ``safety.network`` or any ``url`` role;
6. the baseline: reads allow, writes ask.

`Rules.judge` is synchronous, pure (``lstat``/``readlink``/``stat`` only) and fast
enough to run inline; ``evaluate`` just calls it. Any error while judging is a deny
that names it: the guard fails closed.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from adjutant.safety.protection import (
    Glob,
    ProtectedFile,
    Protection,
    allowed_globs,
    protected_inodes,
    protection,
)
from adjutant.safety.standing import grantable, standing_grant_for
from adjutant_hookspecs import (
    PolicyRequest,
    RoleProblem,
    RoleValue,
    ToolCall,
    Verdict,
    role_values,
)

from ._commands import ESCALATION, check_argv, escalation_name
from ._limits import DEFAULT_MAX_STEPS
from ._network import check_url
from ._paths import PathProblem, ResolvedPath, resolve, within

__all__ = ["DEFAULT_MAX_STEPS", "STUCK_AFTER", "Rules"]

Decision = Literal["allow", "ask", "deny"]
_RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}

#: Tool calls one run may make before the guard refuses more.
#: Identical calls (tool and canonical arguments) that make the guard ask.
STUCK_AFTER = 3
#: Where escalation programs live; their inodes catch hard links under other names.
_BIN_DIRS = (
    "/usr/bin",
    "/bin",
    "/usr/sbin",
    "/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/run/wrappers/bin",
)


@dataclass(frozen=True, slots=True)
class _Finding:
    decision: Decision
    reason: str
    #: The fallback verdict of rule 6, never repeated as "also".
    baseline: bool = False


@dataclass(slots=True)
class _Context:
    request: PolicyRequest
    tool: str
    cwd: str
    writes: bool
    cages: tuple[str, ...]
    homes: tuple[str, ...]
    data_homes: tuple[str, ...]
    protection: Protection
    allowed: tuple[Glob, ...] | None
    _inodes: dict[tuple[int, int], ProtectedFile] | None = None

    def protected_file(self, st: os.stat_result) -> ProtectedFile | None:
        """The protected file ``st`` is another name of (built once per request)."""
        if self._inodes is None:
            self._inodes = protected_inodes(self.homes, self.data_homes)
        return self._inodes.get((st.st_dev, st.st_ino))


class Rules:
    """Path cages, deny patterns, no privilege escalation, no unasked network, guardrails.

    :param max_steps: Tool calls one run may make; the next one is refused.
    """

    name = "guard"

    def __init__(self, *, max_steps: int = DEFAULT_MAX_STEPS) -> None:
        if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        self.max_steps = max_steps
        self._escalation_inodes: frozenset[tuple[int, int]] | None = None

    def __repr__(self) -> str:
        return f"Rules(max_steps={self.max_steps})"

    async def evaluate(self, request: PolicyRequest) -> Verdict:
        """The guard's verdict on one call (see `judge`)."""
        return self.judge(request)

    def judge(self, request: PolicyRequest) -> Verdict:
        """The verdict, synchronously: ``evaluate`` without the coroutine."""
        try:
            findings = self._findings(request)
        except Exception as exc:  # fail closed, and say what broke
            return _verdict("deny", f"the guard could not judge this call: {exc!r}")
        strongest = max(findings, key=lambda f: _RANK[f.decision])
        others = [
            f.reason
            for f in findings
            if f is not strongest and f.decision == strongest.decision and not f.baseline
        ]
        reason = strongest.reason
        if others:
            reason += "; also: " + "; ".join(dict.fromkeys(others[:2]))
        return _verdict(strongest.decision, reason)

    # -- the rules ---------------------------------------------------------------------

    def _findings(self, request: PolicyRequest) -> list[_Finding]:
        call, declaration = request.call, request.declaration
        tool = call.tool
        if tool != declaration.name:
            return [_deny(f"the call is for {tool!r} but comes with the declaration of "
                          f"{declaration.name!r}")]
        safety = declaration.safety
        # Anything but an honest "read" counts as a write (a malformed level included).
        writes = bool(safety.writes) or safety.level != "read"
        findings = self._guardrails(call, request.history)
        try:
            values = role_values(declaration.args_schema, call.args)
        except RoleProblem as exc:
            return [*findings, _deny(f"{tool}: {exc}")]

        executes = writes or any(v.role == "argv" for v in values)
        for value in values:
            if value.role == "argv":
                findings.extend(self._argv(value, request.cwd))
        paths = [v for v in values if v.role == "path"]
        if paths:  # homes, cages and patterns are resolved only when there is a path
            ctx = self._context(request, writes)
            for value in paths:
                findings.extend(self._path(value, ctx, executes=executes))
        findings.extend(self._network(request, [v for v in values if v.role == "url"]))

        if writes:
            level = safety.level if safety.level in ("write", "destructive") else "destructive"
            # consent given in advance for this file or tool answers the baseline
            # question only: any other finding above still asks or denies
            standing = standing_grant_for(tool, [v.value for v in paths], request.cwd,
                                          request.grants, allowed=grantable(
                                              safety.level, (v.role for v in values)))
            findings.append(_Finding(
                "allow", f"{tool} changes things ({level}), covered by your grant {standing}",
                baseline=True) if standing else _Finding(
                "ask", f"{tool} changes things ({level}): it needs your approval", baseline=True
            ))
        elif paths:
            findings.append(_Finding(
                "allow", f"{tool} only reads, inside the working cages", baseline=True
            ))
        else:
            findings.append(_Finding("allow", f"{tool} only reads", baseline=True))
        return findings

    def _guardrails(self, call: ToolCall, history: Sequence[ToolCall]) -> list[_Finding]:
        findings: list[_Finding] = []
        if len(history) >= self.max_steps:
            findings.append(_deny(
                f"this run has already made {len(history)} tool calls, the limit is "
                f"{self.max_steps}: ask again to carry on"
            ))
        mine = _fingerprint(call)
        if sum(_fingerprint(h) == mine for h in history) >= STUCK_AFTER - 1:
            findings.append(_Finding(
                "ask",
                f"I seem to be stuck: {call.tool} was called with the same arguments three times",
            ))
        return findings

    def _argv(self, value: RoleValue, cwd: str) -> list[_Finding]:
        check = check_argv(value.value)
        findings: list[_Finding] = []
        if check.decision is not None:
            decision: Decision = "deny" if check.decision == "deny" else "ask"
            findings.append(_Finding(decision, f"{value.where}: {check.reason}"))
        # A command given by path may be a link (or a hard link) to an escalation
        # program under an innocent name: look at what it really is.
        for head in check.heads:
            if "/" not in head:
                continue
            try:
                target = resolve(head, cwd)
            except PathProblem as exc:
                findings.append(_deny(f"{value.where}: cannot tell what {head!r} runs: {exc}"))
                continue
            if why := self._escalation_program(target):
                findings.append(_deny(f"{value.where}: {why}: Adjutant never escalates privileges"))
        return findings

    def _path(self, value: RoleValue, ctx: _Context, *, executes: bool) -> list[_Finding]:
        raw = value.value
        if not (isinstance(raw, str) and raw.startswith("~")):
            return self._one_path(value.where, raw, ctx, executes=executes)
        # A tool may expand "~" (Python's expanduser does) or take it literally: judge
        # both readings, the stronger wins. "~user" names another home: refuse.
        if raw != "~" and not raw.startswith("~/"):
            return [_deny(
                f"{value.where}: {_show(raw)} names another user's home; write ./{raw} "
                "for a file of that name here"
            )]
        findings = self._one_path(value.where, raw, ctx, executes=executes)
        for home in ctx.homes:
            findings += self._one_path(
                f"{value.where} (~ as {home})", home + raw[1:], ctx, executes=executes
            )
        return findings

    def _one_path(
        self, where: str, raw: object, ctx: _Context, *, executes: bool
    ) -> list[_Finding]:
        try:
            path = resolve(raw, ctx.cwd)
        except PathProblem as exc:
            return [_deny(f"{where}: cannot judge the path {_show(raw)}: {exc}")]
        shown = path.describe()
        verb = "writing" if ctx.writes else "reading"

        if hit := ctx.protection.match(path.names, write=ctx.writes):
            rule, _name = hit
            return [_deny(
                f"{where}: {verb} {shown} is refused in every mode: it matches "
                f"{rule.source}, protected as {rule.label}"
            )]
        st = path.stat
        is_dir = st is not None and stat.S_ISDIR(st.st_mode)
        if ctx.writes and is_dir and (hit := ctx.protection.below(path.resolved)):
            rule, inside = hit
            return [_deny(
                f"{where}: {verb} the directory {shown} is refused: it holds {inside}, "
                f"protected as {rule.label} ({rule.source})"
            )]
        findings: list[_Finding] = []
        if ctx.allowed is not None and not any(g.match(path.resolved) for g in ctx.allowed):
            declared = ", ".join(ctx.request.declaration.safety.allowed_paths)
            findings.append(_deny(
                f"{where}: {shown} is outside the paths {ctx.tool} declares it touches ({declared})"
            ))
        if not any(within(path.resolved, cage) for cage in ctx.cages):
            cages = ", ".join(ctx.cages) or "none are set"
            if ctx.writes:
                findings.append(_deny(
                    f"{where}: {verb} {shown} is refused: it is outside the working cages "
                    f"({cages})"
                ))
            else:
                findings.append(_Finding(
                    "ask", f"{where}: {verb} {shown}, outside the working cages ({cages})"
                ))
        if st is not None and not stat.S_ISDIR(st.st_mode) and st.st_nlink > 1:
            twin = ctx.protected_file(st)
            if twin is not None and (ctx.writes or twin.reads):
                findings.append(_deny(
                    f"{where}: {verb} {shown} is refused: it is a hard link to {twin.path}, "
                    f"protected as {twin.label} ({twin.source})"
                ))
            elif ctx.writes:
                findings.append(_Finding(
                    "ask",
                    f"{where}: {verb} {shown}: the file has {st.st_nlink} hard links, and "
                    "another of its names may be a protected file",
                ))
        if executes and (why := self._escalation_program(path)):
            findings.append(_deny(f"{where}: {why}: Adjutant never escalates privileges"))
        return findings

    def _network(self, request: PolicyRequest, urls: list[RoleValue]) -> list[_Finding]:
        tool = request.call.tool
        findings: list[_Finding] = []
        for value in urls:
            if (outcome := check_url(value.value)) is not None:
                decision: Decision = "deny" if outcome[0] == "deny" else "ask"
                findings.append(_Finding(decision, f"{value.where}: {outcome[1]}"))
        if not (request.declaration.safety.network or urls):
            return findings
        grant = f"network:{tool}"
        family = [g for g in request.grants if g.startswith("network:") and g.endswith(".*")
                  and tool.startswith(g[len("network:"):-1])]
        if grant not in request.grants and not family:
            findings.append(_deny(
                f"{tool} needs the network, which is off: grant {grant!r} for this session "
                "to let it connect"
            ))
        elif request.mode != "execute-auto":
            findings.append(_Finding(
                "ask", f"{tool} connects to the network ({(family or [grant])[0]} granted): "
                "confirm this call"
            ))
        return findings

    # -- helpers -----------------------------------------------------------------------

    def _context(self, request: PolicyRequest, writes: bool) -> _Context:
        homes = _bases((request.home, os.path.expanduser("~")))
        data_homes = _bases((request.data_home,))
        safety = request.declaration.safety
        cages = _bases(request.cages, as_given=False)
        allowed = allowed_globs(tuple(safety.allowed_paths), homes, cages) if (
            safety.allowed_paths
        ) else None
        return _Context(
            request=request,
            tool=request.call.tool,
            cwd=request.cwd,
            writes=writes,
            cages=cages,
            homes=homes,
            data_homes=data_homes,
            protection=protection(
                homes, data_homes, tuple(safety.forbid_patterns), request.call.tool
            ),
            allowed=allowed,
        )

    def _escalation_program(self, path: ResolvedPath) -> str | None:
        """Why running ``path`` would escalate privileges, or None."""
        st = path.stat
        if st is None or not stat.S_ISREG(st.st_mode):
            return None
        shown = path.describe()
        if name := escalation_name(path.resolved):
            return f"{shown} is the privilege-escalation program {name}"
        if st.st_mode & (stat.S_ISUID | stat.S_ISGID):
            return f"{shown} is a set-user-ID or set-group-ID program"
        if (st.st_dev, st.st_ino) in self._known_escalation_inodes():
            return f"{shown} is a hard link to a privilege-escalation program"
        return None

    def _known_escalation_inodes(self) -> frozenset[tuple[int, int]]:
        # Looked up once per guard: these programs do not move while it runs.
        if self._escalation_inodes is None:
            found: set[tuple[int, int]] = set()
            for directory in _BIN_DIRS:
                for name in ESCALATION:
                    try:
                        st = os.stat(f"{directory}/{name}")
                    except OSError:
                        continue
                    found.add((st.st_dev, st.st_ino))
            self._escalation_inodes = frozenset(found)
        return self._escalation_inodes


def _bases(paths: Iterable[object], *, as_given: bool = True) -> tuple[str, ...]:
    """Absolute directories as resolved and, with ``as_given``, also as written
    (normalised): both spellings of a home are protected, but a cage admits only
    what it really is."""
    out: list[str] = []
    for path in paths:
        if not isinstance(path, str) or not path.startswith("/"):
            continue  # relative or missing: it cannot anchor anything
        try:
            resolved = resolve(path, "/")
        except PathProblem:
            continue  # a cage that cannot be resolved admits nothing
        out.extend((resolved.lexical, resolved.resolved) if as_given else (resolved.resolved,))
    return tuple(dict.fromkeys(out))


def _fingerprint(call: object) -> str:
    """A call's identity for the stuck guardrail: tool and canonical JSON arguments."""
    tool, args = getattr(call, "tool", None), getattr(call, "args", None)
    try:
        text = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(args)
    return f"{tool}\x00{text}"


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _deny(reason: str) -> _Finding:
    return _Finding("deny", reason)


def _verdict(decision: Decision, reason: str) -> Verdict:
    return Verdict(decision=decision, reason=reason, policy=Rules.name)

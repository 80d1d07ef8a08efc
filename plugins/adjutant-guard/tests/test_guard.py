"""The guard against each bug class of path and command checks, with real files under tmp_path."""

import errno
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from adjutant_guard import Guard
from adjutant_hookspecs import ARG_ROLE, PolicyRequest, ToolCall, Verdict

pytestmark = pytest.mark.anyio

MODES = ["off", "listen-only", "propose-only", "execute-with-confirmation", "execute-auto"]


async def verdict_of(guard: Guard, request: PolicyRequest) -> Verdict:
    verdict = await guard.evaluate(request)
    assert isinstance(verdict, Verdict)
    assert verdict.policy == "guard"
    assert verdict.reason.strip()
    return verdict


async def decision(guard: Guard, request: PolicyRequest) -> str:
    return (await verdict_of(guard, request)).decision


# -- baseline ------------------------------------------------------------------------


async def test_reads_inside_the_cage_are_allowed(world: Any, guard: Guard) -> None:
    assert await decision(guard, world.request(path="a.txt")) == "allow"
    assert await decision(guard, world.request(paths=["a.txt", "sub/b.txt", "."])) == "allow"
    assert await decision(guard, world.request(note="no paths at all")) == "allow"


async def test_writes_inside_the_cage_ask(world: Any, guard: Guard) -> None:
    verdict = await verdict_of(guard, world.write(path="sub/new.txt"))
    assert verdict.decision == "ask"
    assert "needs your approval" in verdict.reason
    destructive = world.write("files.delete", level="destructive", path="a.txt")
    assert "destructive" in (await verdict_of(guard, destructive)).reason


# -- prefix confusion ----------------------------------------------------------------


async def test_cage_does_not_admit_a_sibling_sharing_its_prefix(world: Any, guard: Guard) -> None:
    evil = world.root / "proj-evil" / "x"
    verdict = await verdict_of(guard, world.write(path=str(evil)))
    assert verdict.decision == "deny"
    assert "outside the working cages" in verdict.reason
    assert await decision(guard, world.write(path="../proj-evil/new")) == "deny"
    assert await decision(guard, world.request(path=str(evil))) == "ask"  # reads ask
    # A cage given with a trailing slash is the same cage.
    slash = world.write(path=str(evil), cages=[f"{world.cage}/"])
    assert await decision(guard, slash) == "deny"


# -- symlinks ------------------------------------------------------------------------


async def test_symlink_inside_the_cage_pointing_out(world: Any, guard: Guard) -> None:
    os.symlink("../outside/secret.txt", world.cage / "innocent.txt")
    verdict = await verdict_of(guard, world.write(path="innocent.txt"))
    assert verdict.decision == "deny"
    assert f"resolves to {world.outside}/secret.txt" in verdict.reason
    assert await decision(guard, world.request(path="innocent.txt")) == "ask"


async def test_parent_directory_that_is_a_symlink(world: Any, guard: Guard) -> None:
    os.symlink(world.outside, world.cage / "docs")
    assert await decision(guard, world.write(path="docs/new.txt")) == "deny"
    assert await decision(guard, world.write(path="docs/deeper/new.txt")) == "deny"
    assert await decision(guard, world.write(path=str(world.cage / "docs" / "x"))) == "deny"


async def test_dangling_symlink_pointing_out(world: Any, guard: Guard) -> None:
    """Creating through a dangling link writes its target."""
    os.symlink(world.outside / "planted.sh", world.cage / "later.sh")
    assert await decision(guard, world.write(path="later.sh")) == "deny"


async def test_symlink_created_to_point_at_ssh(world: Any, guard: Guard) -> None:
    os.symlink(world.home / ".ssh", world.cage / "keys")
    for request in (
        world.request(path="keys/id_rsa"),
        world.write(path="keys/authorized_keys"),
        world.write(path="keys/new_key"),  # not yet there: still protected
    ):
        verdict = await verdict_of(guard, request)
        assert verdict.decision == "deny", request.call.args
        assert "~/.ssh/**" in verdict.reason


async def test_symlink_chain_is_checked_at_every_hop(world: Any, guard: Guard) -> None:
    """home/.ssh itself a link to a vault: the resolved path is not under ~/.ssh, the
    middle hop is."""
    vault = world.root / "vault"
    (world.home / ".ssh").rename(vault)
    os.symlink(vault, world.home / ".ssh")
    os.symlink(world.home / ".ssh" / "id_rsa", world.cage / "key")
    verdict = await verdict_of(guard, world.request(path="key", cages=[world.root]))
    assert verdict.decision == "deny"
    assert "~/.ssh/**" in verdict.reason


async def test_symlink_to_the_cage_itself_is_fine(world: Any, guard: Guard) -> None:
    os.symlink(".", world.cage / "here")
    assert await decision(guard, world.request(path="here/here/a.txt")) == "allow"


# -- `..` ----------------------------------------------------------------------------


async def test_dotdot_traversal(world: Any, guard: Guard) -> None:
    assert await decision(guard, world.write(path="sub/../../outside/x")) == "deny"
    assert await decision(guard, world.write(path="../../../../../../etc/cron.d/x")) == "deny"
    assert await decision(guard, world.write(path="sub/../a.txt")) == "ask"
    assert await decision(guard, world.write(path="new/../a.txt")) == "ask"


async def test_dotdot_after_a_symlink_uses_the_real_parent(world: Any, guard: Guard) -> None:
    """`link/../a.txt` is `a.txt` as a string, but the kernel goes up from the target."""
    (world.outside / "deep").mkdir()
    os.symlink(world.outside / "deep", world.cage / "ln")
    verdict = await verdict_of(guard, world.write(path="ln/../a.txt"))
    assert verdict.decision == "deny"
    assert f"resolves to {world.outside}/a.txt" in verdict.reason


# -- hard links ----------------------------------------------------------------------


async def test_hardlink_to_an_unknown_file_asks_naming_the_count(
    world: Any, guard: Guard
) -> None:
    """Another name of a file has no link to follow: a write through it asks."""
    os.link(world.outside / "secret.txt", world.cage / "notes.txt")
    verdict = await verdict_of(guard, world.write(path="notes.txt"))
    assert verdict.decision == "ask"
    assert "the file has 2 hard links" in verdict.reason
    os.link(world.cage / "notes.txt", world.cage / "third")
    assert "3 hard links" in (await verdict_of(guard, world.write(path="third"))).reason
    assert await decision(guard, world.request(path="notes.txt")) == "allow"


async def test_hardlink_to_a_known_protected_file_is_denied(world: Any, guard: Guard) -> None:
    """Hard links to files the deny patterns name are found by inode."""
    os.link(world.home / ".ssh" / "authorized_keys", world.cage / "keys.txt")
    os.link(world.home / ".ssh" / "id_rsa", world.cage / "key.txt")
    os.link(world.home / ".bashrc", world.cage / "rc.txt")
    os.link(world.data / "log", world.cage / "log.txt")
    for request in (
        world.write(path="keys.txt"),
        world.request(path="key.txt"),  # a secret: reading it is refused too
        world.write(path="rc.txt"),
        world.request(path="log.txt"),
    ):
        verdict = await verdict_of(guard, request)
        assert verdict.decision == "deny", request.call.args
        assert "is a hard link to" in verdict.reason
    # A start-up file is protected against writes only.
    assert await decision(guard, world.request(path="rc.txt")) == "allow"


async def test_directories_are_not_taken_for_hard_links(world: Any, guard: Guard) -> None:
    assert "hard links" not in (await verdict_of(guard, world.write(path="sub"))).reason


# -- /proc and /dev/fd ---------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/proc/self/root/etc/passwd",
        "/proc/self/cwd/a.txt",
        "/proc/thread-self/root/etc/passwd",
        "/proc/1/root/etc/passwd",
        "/proc/self/fd/0",
        "/proc/self/environ",
        "/dev/fd/0",
        "/dev/stdin",
    ],
)
async def test_magic_links_are_denied(world: Any, guard: Guard, path: str) -> None:
    for request in (world.request(path=path), world.write(path=path, cages=["/"])):
        verdict = await verdict_of(guard, request)
        assert verdict.decision == "deny"
        assert "magic link" in verdict.reason


async def test_a_link_to_proc_self_root_is_denied(world: Any, guard: Guard) -> None:
    os.symlink("/proc/self/root", world.cage / "root")
    verdict = await verdict_of(guard, world.request(path="root/etc/passwd"))
    assert (verdict.decision, "magic link" in verdict.reason) == ("deny", True)


# -- relative paths and cwd ----------------------------------------------------------


async def test_relative_paths_resolve_against_cwd(world: Any, guard: Guard) -> None:
    assert await decision(guard, world.request(path="b.txt", cwd=world.cage / "sub")) == "allow"
    assert await decision(guard, world.request(path="secret.txt", cwd=world.outside)) == "ask"
    assert await decision(guard, world.write(path="secret.txt", cwd=world.outside)) == "deny"
    assert await decision(guard, world.write(path="x", cwd="not/absolute")) == "deny"


# -- deny patterns, in every mode, inside the cage too -------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_git_hooks_and_config_inside_the_cage(world: Any, guard: Guard, mode: str) -> None:
    for path in (".git/hooks/pre-commit", ".git/hooks/new/deeper", ".git/config", ".git"):
        verdict = await verdict_of(guard, world.write(path=path, mode=mode))
        assert verdict.decision == "deny", path
        assert "git" in verdict.reason
    # Another repository nested deeper in the cage, not created yet.
    assert await decision(guard, world.write(path="vendor/lib/.git/hooks/post-checkout")) == "deny"
    # Reading git's config is fine.
    assert await decision(guard, world.request(path=".git/config", mode=mode)) == "allow"


async def test_case_tricks_on_protected_names(world: Any, guard: Guard) -> None:
    assert await decision(guard, world.write(path=".GIT/hooks/pre-commit")) == "deny"
    assert await decision(guard, world.request(path=str(world.home / ".SSH/id_rsa"))) == "deny"


@pytest.mark.parametrize(
    "relative",
    [
        ".bashrc",
        ".bash_profile",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".inputrc",
        ".config/fish/config.fish",
        ".config/adjutant/profiles/default.json",
        ".config/claude/claude_desktop_config.json",
        ".cursor/mcp.json",
        ".ssh/authorized_keys",
        ".ssh/rc",
        ".gitconfig",
        ".config/systemd/user/evil.service",
    ],
)
async def test_protected_home_files_even_with_home_as_cage(
    world: Any, guard: Guard, relative: str
) -> None:
    """The cage is the whole fake home; these still refuse, existing or not."""
    path = str(world.home / relative)
    for mode in MODES:
        verdict = await verdict_of(guard, world.write(path=path, cages=[world.home], mode=mode))
        assert verdict.decision == "deny", (relative, mode)
        assert "refused in every mode" in verdict.reason


@pytest.mark.parametrize(
    "relative", [".mcp.json", "sub/.mcp.json", ".vscode/mcp.json", "claude_desktop_config.json",
                 ".envrc", ".claude/settings.json"]
)
async def test_project_mcp_configs_are_protected(world: Any, guard: Guard, relative: str) -> None:
    verdict = await verdict_of(guard, world.write(path=relative))
    assert verdict.decision == "deny"
    assert "starts programs" in verdict.reason or "runs code" in verdict.reason


async def test_operator_data_home_is_protected_for_reads_and_writes(
    world: Any, guard: Guard
) -> None:
    log = str(world.data / "log")
    assert await decision(guard, world.request(path=log, cages=[world.root])) == "deny"
    assert await decision(guard, world.write(path=log, cages=[world.root])) == "deny"
    verdict = await verdict_of(guard, world.write(path=str(world.data / "new"), cages=["/"]))
    assert "Adjutant's own" in verdict.reason


async def test_writing_a_directory_above_protected_files(world: Any, guard: Guard) -> None:
    """Moving or deleting ~/.config, the home or / reaches what they hold."""
    (world.home / ".config" / "fish").mkdir(parents=True)
    for target, cages in ((world.home, [world.home]), (world.home / ".config", [world.home]),
                          (world.root, ["/"]), ("/", ["/"])):
        request = world.write("files.delete", level="destructive", path=str(target), cages=cages)
        verdict = await verdict_of(guard, request)
        assert verdict.decision == "deny", target
        assert "the directory" in verdict.reason
    # The cage itself holds none of them: deleting it only asks.
    delete_cage = world.write("files.delete", level="destructive", path=".")
    assert await decision(guard, delete_cage) == "ask"
    # Reading a directory above them is just a read.
    assert await decision(guard, world.request(path=str(world.home), cages=[world.home])) == "allow"


async def test_etc_is_protected_even_with_a_root_cage(world: Any, guard: Guard) -> None:
    assert await decision(guard, world.write(path="/etc/cron.d/job", cages=["/"])) == "deny"
    assert await decision(guard, world.request(path="/etc/hostname")) == "ask"
    assert await decision(guard, world.request(path="/etc/shadow", cages=["/"])) == "deny"


@pytest.mark.parametrize(
    "relative",
    [".ssh/id_rsa", ".ssh/config", ".gnupg/private-keys-v1.d/x.key", ".aws/credentials",
     ".netrc", ".git-credentials", ".kube/config", ".docker/config.json"],
)
async def test_secrets_are_not_even_read(world: Any, guard: Guard, relative: str) -> None:
    request = world.request(path=str(world.home / relative), cages=[world.home])
    verdict = await verdict_of(guard, request)
    assert verdict.decision == "deny"
    assert "reading" in verdict.reason


async def test_env_files(world: Any, guard: Guard) -> None:
    assert await decision(guard, world.request(path=".env")) == "deny"
    assert await decision(guard, world.request(path="sub/.env.production")) == "deny"
    assert await decision(guard, world.write(path=".env.local")) == "deny"
    assert await decision(guard, world.request(path=".env.example")) == "allow"


async def test_tool_forbid_patterns(world: Any, guard: Guard) -> None:
    forbid = ("**/*.lock", "/srv/**", "~/notes/**")
    assert await decision(guard, world.request(path="uv.lock", forbid=forbid)) == "deny"
    verdict = await verdict_of(guard, world.request(path="sub/a.lock", forbid=forbid))
    assert "forbids" in verdict.reason
    notes = str(world.home / "notes" / "n.md")
    assert await decision(guard, world.request(path=notes, forbid=forbid)) == "deny"
    assert await decision(guard, world.request(path="a.txt", forbid=forbid)) == "allow"


async def test_allowed_paths_narrow_the_cage(world: Any, guard: Guard) -> None:
    allowed = ("sub/**",)
    assert await decision(guard, world.request(path="sub/b.txt", allowed=allowed)) == "allow"
    verdict = await verdict_of(guard, world.request(path="a.txt", allowed=allowed))
    assert (verdict.decision, "declares it touches" in verdict.reason) == ("deny", True)
    # A link inside the allowed area pointing elsewhere does not count as inside.
    os.symlink("../a.txt", world.cage / "sub" / "ln")
    assert await decision(guard, world.request(path="sub/ln", allowed=allowed)) == "deny"


async def test_tilde_is_judged_both_ways(world: Any, guard: Guard) -> None:
    """A tool may expand `~` or not: `~/.ssh/id_rsa` is refused either way."""
    verdict = await verdict_of(guard, world.request(path="~/.ssh/id_rsa"))
    assert (verdict.decision, "~/.ssh/**" in verdict.reason) == ("deny", True)
    assert await decision(guard, world.write(path="~/.bashrc")) == "deny"
    assert await decision(guard, world.request(path="~root/.profile")) == "deny"
    assert await decision(guard, world.request(path="~/notes.txt")) == "ask"  # home: no cage


# -- paths that cannot be judged -----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("a\x00b", "NUL"),
        (7, "expected a path string"),
        ({"p": "a"}, "expected a path string"),
        ("", "empty"),
        ("\udcff\ud800", "encoded"),
        ("x/" * 3000, "longer than"),
    ],
)
async def test_unparseable_paths_are_denied(
    world: Any, guard: Guard, value: object, why: str
) -> None:
    for request in (world.request(path=value), world.write(path=value)):
        verdict = await verdict_of(guard, request)
        assert verdict.decision == "deny"
        assert why in verdict.reason


async def test_symlink_loop_is_denied(world: Any, guard: Guard) -> None:
    os.symlink("loop2", world.cage / "loop1")
    os.symlink("loop1", world.cage / "loop2")
    verdict = await verdict_of(guard, world.request(path="loop1/x"))
    assert (verdict.decision, "symbolic links" in verdict.reason) == ("deny", True)


async def test_permission_error_is_denied(
    world: Any, guard: Guard, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.lstat
    locked = str(world.cage / "locked")

    def lstat(path: Any) -> os.stat_result:
        if str(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "lstat", lstat)
    verdict = await verdict_of(guard, world.request(path="locked/x"))
    assert (verdict.decision, "Permission denied" in verdict.reason) == ("deny", True)


async def test_paths_role_checks_every_element(world: Any, guard: Guard) -> None:
    request = world.write(paths=["a.txt", "sub/b.txt", "../outside/secret.txt"])
    verdict = await verdict_of(guard, request)
    assert (verdict.decision, "paths[2]" in verdict.reason) == ("deny", True)
    assert await decision(guard, world.write(paths="a.txt")) == "deny"  # not a list


async def test_nested_roles_and_refs_are_found(world: Any, guard: Guard) -> None:
    schema = {
        "type": "object",
        "$defs": {"target": {"type": "string", ARG_ROLE: "path"}},
        "properties": {
            "edits": {
                "type": "array",
                "items": {"type": "object", "properties": {"file": {"$ref": "#/$defs/target"}}},
            },
            "maybe": {"anyOf": [{"type": "null"}, {"type": "string", ARG_ROLE: "path"}]},
        },
    }
    base = world.write(edits=[{"file": "a.txt"}])
    declaration = msgspec.structs.replace(base.declaration, args_schema=schema)

    def with_args(**args: Any) -> PolicyRequest:
        return msgspec.structs.replace(
            base, declaration=declaration, call=ToolCall(tool="files.write", args=args)
        )

    assert await decision(guard, with_args(edits=[{"file": "a.txt"}])) == "ask"
    evil = with_args(edits=[{"file": "a.txt"}, {"file": "../outside/x"}])
    verdict = await verdict_of(guard, evil)
    assert (verdict.decision, "edits[1].file" in verdict.reason) == ("deny", True)
    assert await decision(guard, with_args(maybe=None)) == "ask"
    assert await decision(guard, with_args(maybe="/etc/passwd")) == "deny"


async def test_unknown_role_and_unfollowable_ref_are_denied(world: Any, guard: Guard) -> None:
    typo = world.request(roles={"path": "pathz"}, path="a.txt")
    assert "unknown x-adjutant-role" in (await verdict_of(guard, typo)).reason
    base = world.request(path="a.txt")
    remote = {"type": "object", "properties": {"path": {"$ref": "https://x.test/s.json"}}}
    request = msgspec.structs.replace(
        base, declaration=msgspec.structs.replace(base.declaration, args_schema=remote)
    )
    assert await decision(guard, request) == "deny"


# -- guardrails ------------------------------------------------------------------------


async def test_the_same_call_a_third_time_asks(world: Any, guard: Guard) -> None:
    same = ToolCall(tool="files.read", args={"path": "a.txt", "note": "x"})
    reordered = ToolCall(tool="files.read", args={"note": "x", "path": "a.txt"})
    once = world.request(path="a.txt", note="x", history=[same])
    assert await decision(guard, once) == "allow"
    thrice = world.request(path="a.txt", note="x", history=[same, reordered])
    verdict = await verdict_of(guard, thrice)
    assert verdict.decision == "ask"
    assert verdict.reason == (
        "I seem to be stuck: files.read was called with the same arguments three times"
    )
    # Other arguments or another tool do not count.
    other = ToolCall(tool="files.read", args={"path": "sub/b.txt", "note": "x"})
    differs = world.request(path="a.txt", note="x", history=[same, other])
    assert await decision(guard, differs) == "allow"


async def test_max_steps(world: Any, guard: Guard) -> None:
    history = [ToolCall(tool="files.read", args={"path": str(i)}) for i in range(25)]
    assert await decision(guard, world.request(path="a.txt", history=history[:24])) == "allow"
    verdict = await verdict_of(guard, world.request(path="a.txt", history=history))
    assert (verdict.decision, "limit is 25" in verdict.reason) == ("deny", True)
    small = Guard(max_steps=3)
    assert await decision(small, world.request(path="a.txt", history=history[:2])) == "allow"
    assert await decision(small, world.request(path="a.txt", history=history[:3])) == "deny"


# -- combining -------------------------------------------------------------------------


async def test_deny_beats_ask_and_the_reason_names_it(world: Any, guard: Guard) -> None:
    stuck = [ToolCall(tool="shell.run", args={"argv": ["sudo", "id"]})] * 2
    verdict = await verdict_of(guard, world.write("shell.run", argv=["sudo", "id"], history=stuck))
    assert verdict.decision == "deny"
    assert verdict.reason.startswith("argv: sudo runs commands as another user")


async def test_several_denials_are_all_named(world: Any, guard: Guard) -> None:
    request = world.write(paths=["../outside/a", ".git/hooks/x"])
    verdict = await verdict_of(guard, request)
    assert verdict.decision == "deny"
    assert "paths[0]" in verdict.reason
    assert "also: paths[1]" in verdict.reason


async def test_mismatched_declaration_is_denied(world: Any, guard: Guard) -> None:
    request = world.request(path="a.txt")
    wrong = msgspec.structs.replace(request, call=ToolCall(tool="files.other", args={}))
    assert await decision(guard, wrong) == "deny"


async def test_malformed_request_fails_closed(world: Any, guard: Guard) -> None:
    """Python construction skips type checks: the guard must still answer, and deny."""
    request = world.request(path="a.txt")
    broken = msgspec.structs.replace(request, history=[None, 3])  # type: ignore[list-item]
    assert await decision(guard, broken) in ("allow", "deny")  # no crash
    weird = msgspec.structs.replace(request, cwd=None)  # type: ignore[arg-type]
    verdict = await verdict_of(guard, weird)
    assert verdict.decision == "deny"


async def test_verdicts_are_deterministic_and_change_nothing(world: Any, guard: Guard) -> None:
    os.symlink("../outside", world.cage / "out")
    os.symlink("loop", world.cage / "loop")
    requests = [
        world.request(path="a.txt"),
        world.write(path="out/new/deeper/file.txt"),
        world.write(path=".git/hooks/pre-commit"),
        world.request(path="loop/x"),
        world.write("shell.run", argv=["env", "sudo"]),
        world.write(path="not/yet/there.txt"),
    ]

    def snapshot() -> list[tuple[str, int, int, int]]:
        out = []
        for dirpath, dirnames, filenames in os.walk(world.root):
            for name in sorted(dirnames + filenames):
                st = os.lstat(Path(dirpath) / name)
                out.append((f"{dirpath}/{name}", st.st_mode, st.st_size, st.st_mtime_ns))
        return sorted(out)

    before = snapshot()
    first = [await guard.evaluate(r) for r in requests]
    again = [await guard.evaluate(r) for r in requests]
    assert first == again
    assert snapshot() == before
    assert not (world.cage / "not").exists()


async def test_evaluate_and_judge_agree(world: Any, guard: Guard) -> None:
    request = world.write(path="../outside/x")
    assert await guard.evaluate(request) == guard.judge(request)


# -- standing write grants ---------------------------------------------------------------


async def test_a_standing_grant_answers_the_baseline_question_only(
    world: Any, guard: Guard
) -> None:
    """``file:`` for that file named as itself, ``tool:`` for that tool: the write's
    own question becomes an allow; a hard link, a link out or a path outside the
    cages still asks or is refused, whatever the grant."""
    target = world.cage / "notes.txt"
    target.write_text("x\n")
    granted = (f"file:{target}",)
    covered = await verdict_of(guard, world.write(path="notes.txt", grants=granted))
    assert covered.decision == "allow" and f"covered by your grant file:{target}" in \
        covered.reason
    assert await decision(guard, world.write(path="other.txt", grants=granted)) == "ask"
    tool = await verdict_of(guard, world.write(path="other.txt", grants=("tool:files.write",)))
    assert tool.decision == "allow"
    assert await decision(guard, world.write("files.other", path="other.txt",
                                              grants=("tool:files.write",))) == "ask"
    (world.cage / "link.txt").symlink_to(target)  # another name: not the granted one
    assert await decision(guard, world.write(path="link.txt", grants=granted)) == "ask"
    os.link(target, world.cage / "twin.txt")  # now the granted file has two names
    twin = await verdict_of(guard, world.write(path="notes.txt",
                                               grants=(*granted, "tool:files.write")))
    assert twin.decision == "ask" and "2 hard links" in twin.reason  # still asked
    outside = world.outside / "secret.txt"
    assert await decision(guard, world.write(path=str(outside), grants=(
        f"file:{outside}", "tool:files.write"))) == "deny"  # outside the cages

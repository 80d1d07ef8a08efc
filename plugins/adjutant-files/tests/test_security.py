"""Adversarial tests, one or more per bug class of file tools (traversal,
links, races, protected names, indirect reads). Every refusal is an
error result naming its rule, and leaves the file system exactly as it was."""

import os
from pathlib import Path
from typing import Any

import pytest

from adjutant.testing import needs_sandbox
from adjutant_files import (
    CompressZip,
    EditorPatch,
    FsAppend,
    FsDiff,
    FsRead,
    FsWrite,
    SearchGrep,
)
from adjutant_hookspecs import ToolContext

from .helpers import make_cage, run, snapshot

pytestmark = pytest.mark.anyio
needs_rg = needs_sandbox


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ctx = make_cage(tmp_path)
    evil = tmp_path / "proj-evil"
    evil.mkdir()
    (evil / "secret.txt").write_text("outside secret\n")
    return ctx


async def refused(rule: str, tool: Any, ctx: ToolContext, root: Path, **args: Any) -> str:
    """Dry-run and execute are both refused naming ``rule``; nothing changes under root."""
    before = snapshot(root)
    for dry in (True, False):
        result = await run(tool, ctx, dry=dry, **args)
        assert result.status == "error", result
        assert f"[rule: {rule}]" in result.stderr, result.stderr
    assert snapshot(root) == before
    return result.stderr


WRITERS = [FsWrite(), FsAppend()]


@pytest.mark.parametrize("path", ["../proj-evil/secret.txt", "src/../../proj-evil/secret.txt",
                                  "a/../notes.txt"])
async def test_traversal(ctx: ToolContext, tmp_path: Path, path: str) -> None:
    await refused("traversal", FsRead(), ctx, tmp_path, path=path)
    for tool in WRITERS:
        await refused("traversal", tool, ctx, tmp_path, path=path, content="x")


async def test_prefix_confusion(ctx: ToolContext, tmp_path: Path) -> None:
    outside = str(tmp_path / "proj-evil" / "secret.txt")
    await refused("cage", FsRead(), ctx, tmp_path, path=outside)
    await refused("cage", FsWrite(), ctx, tmp_path, path=outside, content="x")
    await refused("cage", FsRead(), ctx, tmp_path, path="/etc/passwd")


async def test_no_cage_fails_closed(tmp_path: Path) -> None:
    ctx = make_cage(tmp_path)
    await refused("cage", FsRead(), ToolContext(cwd=ctx.cwd), tmp_path, path="notes.txt")


async def test_symlink_in_cage_pointing_out(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "link.txt").symlink_to(tmp_path / "proj-evil" / "secret.txt")
    await refused("symlink", FsRead(), ctx, tmp_path, path="link.txt")
    await refused("symlink", FsWrite(), ctx, tmp_path, path="link.txt", content="pwned")
    await refused("symlink", FsAppend(), ctx, tmp_path, path="link.txt", content="pwned")
    await refused("symlink", CompressZip(), ctx, tmp_path, paths=["link.txt"], output="o.zip")


async def test_parent_directory_is_a_symlink(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "evil").symlink_to(tmp_path / "proj-evil")
    await refused("symlink", FsRead(), ctx, tmp_path, path="evil/secret.txt")
    await refused("symlink", FsWrite(), ctx, tmp_path, path="evil/new.txt", content="x")
    await refused("symlink", CompressZip(), ctx, tmp_path, paths=["notes.txt"],
                  output="evil/o.zip")


async def test_symlink_swapped_in_between_dry_run_and_execute(
    ctx: ToolContext, tmp_path: Path
) -> None:
    cage = Path(ctx.cwd)
    preview = await run(FsWrite(), ctx, dry=True, path="src/app.py", content="x\n")
    assert preview.status == "dry_run"
    (cage / "src").rename(cage / "src-real")
    (cage / "src").symlink_to(tmp_path / "proj-evil")  # parent swapped for a link
    await refused("symlink", FsWrite(), ctx, tmp_path, path="src/app.py", content="x\n")
    preview = await run(FsWrite(), ctx, dry=True, path="notes.txt", content="x\n")
    assert preview.status == "dry_run"
    (cage / "notes.txt").unlink()
    (cage / "notes.txt").symlink_to(tmp_path / "proj-evil" / "secret.txt")  # file swapped
    await refused("symlink", FsWrite(), ctx, tmp_path, path="notes.txt", content="x\n")
    assert (tmp_path / "proj-evil" / "secret.txt").read_text() == "outside secret\n"


async def test_hardlink_to_a_file_outside(ctx: ToolContext, tmp_path: Path) -> None:
    os.link(tmp_path / "proj-evil" / "secret.txt", Path(ctx.cwd) / "hard.txt")
    await refused("hardlink", FsWrite(), ctx, tmp_path, path="hard.txt", content="pwned")
    await refused("hardlink", FsAppend(), ctx, tmp_path, path="hard.txt", content="pwned")
    patch = "--- a/hard.txt\n+++ b/hard.txt\n@@ -1 +1 @@\n-outside secret\n+pwned\n"
    await refused("hardlink", EditorPatch(), ctx, tmp_path, patch=patch)


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", ".mcp.json", ".env",
                                  ".env.local", "sub/.ENV", ".bashrc", ".vscode/mcp.json",
                                  ".Git/Config"])
async def test_protected_even_when_missing(ctx: ToolContext, tmp_path: Path, path: str) -> None:
    await refused("protected", FsWrite(), ctx, tmp_path, path=path, content="[core]\n")
    await refused("protected", FsRead(), ctx, tmp_path, path=path)
    patch = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n"
    await refused("protected", EditorPatch(), ctx, tmp_path, patch=patch)


@pytest.mark.parametrize("path", ["keys/id_rsa", "deploy/id_ed25519_sk"])
async def test_the_core_deny_rules_hold_in_process_for_reads(ctx: ToolContext, tmp_path: Path,
                                                             path: str) -> None:
    """No policy plugin here: the tools apply `adjutant.safety.protection.Shield` themselves."""
    (Path(ctx.cwd) / path).parent.mkdir()
    (Path(ctx.cwd) / path).write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    why = await refused("protected", FsRead(), ctx, tmp_path, path=path)
    assert "an SSH private key" in why
    await refused("protected", FsDiff(), ctx, tmp_path, a="notes.txt", b=path)
    await refused("protected", FsWrite(), ctx, tmp_path, path=path, content="x")


@pytest.mark.parametrize("path", [".envrc", "sub/.envrc", ".git/HEAD", ".git/commondir",
                                  ".git/info/attributes", ".gemini/settings.json",
                                  "claude_desktop_config.json"])
async def test_the_core_deny_rules_hold_in_process_for_writes(ctx: ToolContext,
                                                              tmp_path: Path,
                                                              path: str) -> None:
    (Path(ctx.cwd) / path).parent.mkdir(parents=True, exist_ok=True)
    for tool in WRITERS:
        await refused("protected", tool, ctx, tmp_path, path=path, content="x")


async def test_a_hard_link_to_a_protected_file_of_the_home_is_not_read(tmp_path: Path) -> None:
    ctx = make_cage(tmp_path)
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    os.link(home / ".ssh" / "id_rsa", Path(ctx.cwd) / "innocent.txt")
    ctx = ToolContext(cwd=ctx.cwd, cages=ctx.cages, home=str(home))
    why = await refused("protected", FsRead(), ctx, tmp_path, path="innocent.txt")
    assert "hard link" in why


async def test_missing_parent_is_refused_not_created(ctx: ToolContext, tmp_path: Path) -> None:
    await refused("missing", FsWrite(), ctx, tmp_path, path="no/such/dir/f.txt", content="x")


async def test_huge_and_binary_files(tmp_path: Path) -> None:
    ctx = make_cage(tmp_path)
    cage = Path(ctx.cwd)
    (cage / "big.txt").write_bytes(b"a" * 2048)
    (cage / "bin.dat").write_bytes(b"\x7fELF\x00\x01")
    small = FsRead(max_file_bytes=1024)
    await refused("too-large", small, ctx, tmp_path, path="big.txt")
    assert (await run(small, ctx, path="big.txt", max_bytes=10)).stdout == "a" * 10
    await refused("argument-size", FsWrite(max_file_bytes=1024), ctx, tmp_path, path="n.txt",
                  content="x" * 2000)
    result = await run(FsRead(), ctx, path="bin.dat")
    assert "[rule: binary]" in result.stderr and "binary file" in result.stderr
    await refused("binary", FsWrite(), ctx, tmp_path, path="bin.dat", content="x")


async def test_fifo_and_directories_are_not_files(ctx: ToolContext, tmp_path: Path) -> None:
    os.mkfifo(Path(ctx.cwd) / "fifo")
    await refused("not-a-file", FsRead(), ctx, tmp_path, path="fifo")
    await refused("not-a-file", FsRead(), ctx, tmp_path, path="src")


async def test_unknown_arguments_are_refused(ctx: ToolContext, tmp_path: Path) -> None:
    await refused("unknown-argument", FsRead(), ctx, tmp_path, path="notes.txt", follow=True)


PATCHES = {
    "malformed-patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n-hello\n+hi\n",
    "fuzzy-patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -2,1 +2,1 @@\n-hello\n+hi\n",
    "traversal": "--- a/../proj-evil/secret.txt\n+++ b/../proj-evil/secret.txt\n"
                 "@@ -1 +1 @@\n-outside secret\n+pwned\n",
    "cage": "--- /dev/null\n+++ /tmp/adjutant-files-escape.txt\n@@ -0,0 +1 @@\n+x\n",
    "unsupported-patch": "--- a/notes.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-hello\n-world\n",
}


@pytest.mark.parametrize("rule", list(PATCHES))
async def test_bad_patches_change_nothing(ctx: ToolContext, tmp_path: Path, rule: str) -> None:
    # a good first file, then the bad one: atomic, so the first is not applied either
    good = "--- a/notes.old\n+++ b/notes.old\n@@ -1 +1 @@\n-hello\n+changed\n"
    await refused(rule, EditorPatch(), ctx, tmp_path, patch=good + PATCHES[rule])
    assert not Path("/tmp/adjutant-files-escape.txt").exists()


async def test_patch_through_symlinked_target(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "evil").symlink_to(tmp_path / "proj-evil")
    patch = ("--- a/notes.old\n+++ b/notes.old\n@@ -1 +1 @@\n-hello\n+changed\n"
             "--- a/evil/secret.txt\n+++ b/evil/secret.txt\n@@ -1 +1 @@\n-outside secret\n+x\n")
    await refused("symlink", EditorPatch(), ctx, tmp_path, patch=patch)


async def test_zip_refuses_overwrite_and_escape(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "have.zip").write_bytes(b"keep")
    await refused("exists", CompressZip(), ctx, tmp_path, paths=["src"], output="have.zip")
    await refused("traversal", CompressZip(), ctx, tmp_path, paths=["src"],
                  output="../proj-evil/o.zip")
    await refused("cage", CompressZip(), ctx, tmp_path,
                  paths=[str(tmp_path / "proj-evil" / "secret.txt")], output="o.zip")


@needs_rg
@pytest.mark.parametrize("args", [
    {"pattern": "x", "pre": "sh"},
    {"pattern": "x", "hostname_bin": "/bin/sh"},
    {"pattern": "x", "search_zip": True},
    {"pattern": "x", "glob": "--pre=sh"},
    {"pattern": "x", "glob": "{a,b}/**/[x]"},
    {"pattern": "x", "paths": ["--pre=sh"]},
    {"pattern": "x", "paths": ["-e"]},
    {"pattern": "x", "paths": ["../proj-evil"]},
    {"pattern": "x", "paths": ["evil"]},
])
async def test_grep_option_injection_refused(ctx: ToolContext, tmp_path: Path,
                                             args: dict[str, Any]) -> None:
    (Path(ctx.cwd) / "evil").symlink_to(tmp_path / "proj-evil")
    result = await run(SearchGrep(), ctx, **args)
    assert result.status == "error" and "[rule: " in result.stderr, result


@needs_rg
async def test_grep_pattern_starting_with_dash_is_only_a_pattern(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (Path(ctx.cwd) / "opts.txt").write_text("--pre=touch\n")
    result = await run(SearchGrep(), ctx, pattern="--pre=touch", fixed_strings=True)
    assert (result.status, result.stdout) == ("ok", "./opts.txt:1:--pre=touch\n")


@needs_rg
async def test_grep_does_not_follow_links_out(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "evil").symlink_to(tmp_path / "proj-evil")
    (Path(ctx.cwd) / "leak.txt").symlink_to(tmp_path / "proj-evil" / "secret.txt")
    result = await run(SearchGrep(), ctx, pattern="secret")
    assert (result.status, result.stdout) == ("ok", "")


# -- indirect reads: every file a tool finds by itself passes the
# -- deny rules of fs.read, whatever route reached it ---------------------------------

MARKER = "SECRET-MARKER-7f3a"


def secrets_bench(tmp_path: Path) -> tuple[ToolContext, Path]:
    """A fake home with ~/.ssh/id_rsa and ~/.aws/credentials, and a cage holding a hard
    link to the key, a copy under keys/, environment files and a `.ignore` that
    re-includes `.env`: each carries MARKER. Only `ok.txt` may come back."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".aws").mkdir()
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARKER}\n")
    (home / ".aws" / "credentials").write_text(f"aws_secret_access_key = {MARKER}\n")
    cage = tmp_path / "work"
    (cage / "keys").mkdir(parents=True)
    os.link(home / ".ssh" / "id_rsa", cage / "h")
    (cage / "keys" / "id_rsa").write_text(f"{MARKER}\n")
    (cage / ".env").write_text(f"TOKEN={MARKER}\n")
    (cage / ".env.local").write_text(f"TOKEN={MARKER}\n")
    (cage / ".ignore").write_text("!.env\n!.env.local\n")
    (cage / "ok.txt").write_text(f"not a {MARKER[:6]} here\n")
    ctx = ToolContext(cwd=str(cage), cages=(str(cage),), home=str(home),
                      data_home=str(tmp_path / "data"))
    return ctx, home


@needs_rg
@pytest.mark.parametrize("args", [
    {"pattern": "SECRET"}, {"pattern": "SECRET", "glob": ".env"},
    {"pattern": "SECRET", "glob": ".env.*"}, {"pattern": "SECRET", "glob": "*"},
    {"pattern": "SECRET", "glob": "h"}, {"pattern": "SECRET", "paths": ["keys", "."]},
    {"pattern": "SECRET", "paths": ["h"]}, {"pattern": "MARKER-7f3a", "fixed_strings": True},
    {"pattern": ".", "glob": "!ok.txt"},
])
async def test_grep_withholds_protected_files_it_finds(tmp_path: Path,
                                                       args: dict[str, Any]) -> None:
    ctx, _ = secrets_bench(tmp_path)
    result = await run(SearchGrep(), ctx, **args)
    assert result.status == "ok", result.stderr
    assert MARKER not in result.stdout
    if "paths" in args or args.get("glob") in ("*", "h") or args["pattern"] != "SECRET":
        # the hard link has no protected name: only the shield's inode check stops it
        assert "h is a hard link to" in result.stdout and "withheld" in result.stdout


@needs_rg
async def test_grep_names_what_it_withheld_and_keeps_the_rest(tmp_path: Path) -> None:
    ctx, _ = secrets_bench(tmp_path)
    result = await run(SearchGrep(), ctx, pattern="SECRET|not a", glob="*")
    lines = result.stdout.splitlines()
    assert lines[0] == "./ok.txt:1:not a SECRET here"
    assert "withheld the matches of 2 file(s)" in lines[1]  # h and .env.local
    assert any(".env.local matches **/.env.*" in line for line in lines)


@needs_rg
async def test_grep_with_the_home_as_workspace(tmp_path: Path) -> None:
    _, home = secrets_bench(tmp_path)
    ctx = ToolContext(cwd=str(home), cages=(str(home),), home=str(home))
    shown = ""
    for args in ({"pattern": "SECRET", "glob": "*"}, {"pattern": "aws_secret", "glob": "*"},
                 {"pattern": "SECRET", "glob": ".ssh/*"}, {"pattern": "SECRET", "glob": ".*"}):
        result = await run(SearchGrep(), ctx, **args)
        assert result.status == "ok" and MARKER not in result.stdout, result.stdout
        shown += result.stdout
    # (the sandbox hides ~/.ssh and ~/.aws from rg too; the filter is the second layer)


@needs_rg
async def test_grep_data_home_in_the_cage_is_withheld(tmp_path: Path) -> None:
    ctx, _ = secrets_bench(tmp_path)
    data = Path(ctx.cwd) / "state"
    data.mkdir()
    (data / "log.txt").write_text(f"{MARKER}\n")
    ctx = ToolContext(cwd=ctx.cwd, cages=ctx.cages, home=ctx.home, data_home=str(data))
    result = await run(SearchGrep(), ctx, pattern="SECRET", paths=["state"])
    assert result.status == "ok" and MARKER not in result.stdout  # hidden by the sandbox


def test_grep_filter_withholds_what_rg_reports(tmp_path: Path) -> None:
    """The filter on its own, fed what rg would report (the sandbox also hides the data
    home and ~/.ssh, so a real run cannot show this layer alone)."""
    import base64
    import json

    from adjutant.safety.protection import Shield
    from adjutant_files._grep import render

    ctx, home = secrets_bench(tmp_path)
    data = Path(ctx.cwd) / "state"
    data.mkdir()
    (data / "log.txt").write_text(f"{MARKER}\n")

    def hit(path: str | bytes, text: str) -> str:
        name = ({"text": path} if isinstance(path, str)
                else {"bytes": base64.b64encode(path).decode()})
        return json.dumps({"type": "match", "data": {"path": name, "lines": {"text": text},
                                                      "line_number": 1}})

    odd = b"./caf\xe9/.env"  # not UTF-8: rg sends it as bytes
    lines = [hit("./ok.txt", "fine\n"), hit("./state/log.txt", MARKER),
             hit(f"{home}/.ssh/id_rsa", MARKER), hit("./h", MARKER), hit(odd, MARKER),
             '{"type":"match","data":{"path":{"text":"./cut', "not json"]
    shield = Shield(str(home), str(data))
    shown = render("\n".join(lines), ctx.cwd, shield)
    assert MARKER not in shown
    assert shown.startswith("./ok.txt:1:fine\n[search.grep withheld the matches of 4 file(s)")
    assert "protected as Adjutant's own" in shown and "h is a hard link to" in shown


@needs_rg
async def test_grep_output_is_cleaned_of_escapes(ctx: ToolContext) -> None:
    (Path(ctx.cwd) / "esc.txt").write_text("hit \x1b]52;c;cHduZWQ=\x07\x1b[2J done\n")
    result = await run(SearchGrep(), ctx, pattern="hit")
    assert result.stdout == "./esc.txt:1:hit  done\n"


async def test_zip_leaves_protected_files_out_and_says_so(tmp_path: Path) -> None:
    import io
    import zipfile

    ctx, _ = secrets_bench(tmp_path)
    preview = await run(CompressZip(), ctx, dry=True, paths=["."], output="all.zip")
    result = await run(CompressZip(), ctx, paths=["."], output="all.zip")
    assert result.status == "ok", result.stderr
    # the approval saw exactly what the run did: the same members, the same withheld
    assert preview.dry_run_diff is not None
    assert preview.dry_run_diff.removeprefix("create ") == result.stdout.removeprefix("created ")
    for name in ("h: ", "keys/id_rsa: ", ".env: ", ".env.local: "):
        assert f"withheld (protected): {name}" in result.stdout
    data = (Path(ctx.cwd) / "all.zip").read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert sorted(archive.namelist()) == [".ignore", "ok.txt"]
        assert all(MARKER not in archive.read(n).decode() for n in archive.namelist())


@pytest.mark.parametrize("path", ["h", "keys/id_rsa", "keys/../h"])
async def test_zip_refuses_a_protected_file_it_is_given(tmp_path: Path, path: str) -> None:
    ctx, _ = secrets_bench(tmp_path)
    result = await run(CompressZip(), ctx, paths=["ok.txt", path], output="o.zip")
    assert result.status == "error" and "[rule:" in result.stderr
    assert not (Path(ctx.cwd) / "o.zip").exists()


async def test_zip_of_the_home_leaves_every_secret_out(tmp_path: Path) -> None:
    import zipfile

    _, home = secrets_bench(tmp_path)
    (home / ".config" / "gcloud").mkdir(parents=True)  # protected by the shield's rules only
    (home / ".config" / "gcloud" / "credentials.db").write_text(f"{MARKER}\n")
    (home / "notes.txt").write_text("mine\n")
    ctx = ToolContext(cwd=str(home), cages=(str(home),), home=str(home))
    result = await run(CompressZip(), ctx, paths=["."], output="home.zip")
    assert result.status == "ok", result.stderr
    for name in (".ssh: ", ".aws: ", ".config/gcloud/: "):
        assert f"withheld (protected): {name}" in result.stdout
    with zipfile.ZipFile(home / "home.zip") as archive:
        assert archive.namelist() == ["notes.txt"]

"""``compress.zip``: zip files of the cage into a new archive in the cage.

Inputs are read through the cage walk (directories recursively, by file descriptor);
symbolic links are skipped, never followed, and listed in the output. The archive is
built in a temporary file beside the target and linked into place with ``link``,
which fails if the name exists: an existing file is never overwritten.

Every member passes the deny rules of ``fs.read`` (`adjutant.safety.protection.Shield`:
protected names and patterns, and hard links to protected files, judged on the
opened file's ``fstat``). A protected file met while walking a directory is left out
and listed as *withheld* in the preview and the result, so the approval shows exactly
what the archive will lack; a protected file named in ``paths`` refuses the call.
Withholding is the clearer outcome for "zip this folder" (the user gets the folder,
minus what never leaves, and is told), refusing the clearer one when the user asked
for that very file (an archive silently without it would be a lie).
"""

from __future__ import annotations

import os
import stat
from typing import Any

from adjutant.toolkit import Located, check_file, discard, locate, protected_reason, walk
from adjutant_hookspecs import ARG_ROLE, ToolCall, ToolContext, ToolDeclaration, ToolSafety

from ._common import BaseTool, Refused, get_paths, get_str, path_prop

__all__ = ["CompressZip"]

MAX_ENTRIES = 10000
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class CompressZip(BaseTool):
    declaration = ToolDeclaration(
        name="compress.zip",
        version="0.1.0",
        summary="Zip {paths} into {output}",
        description=(
            "Create a new zip archive inside the cage from files and directories of the "
            "cage. Never overwrites an existing file; links are skipped, never followed; "
            "protected files are refused when named and left out of directories (listed "
            "as withheld). Requests like: 'zip the src folder into "
            "src.zip', 'bundle notes.txt and todo.md into notes.zip'."),
        args_schema={
            "type": "object",
            "properties": {
                "paths": {"type": "array", "minItems": 1, "maxItems": 1000,
                          "items": {"type": "string", "minLength": 1, "maxLength": 4096},
                          ARG_ROLE: "paths",
                          "description": "Files or directories to add, relative to the "
                                         "working directory."},
                "output": path_prop("The archive to create (must end in .zip and not "
                                    "exist yet), relative to the working directory."),
            },
            "required": ["paths", "output"],
            "additionalProperties": False,
            "x-adjutant-requests": ["zip the src folder into src.zip",
                                    "bundle notes.txt and src/app.py into notes.zip"],
        },
        safety=ToolSafety(writes=True, level="write"),
        examples=({"paths": ["src"], "output": "src.zip"},
                  {"paths": ["notes.txt", "src/app.py"], "output": "out/notes.zip"}),
    )

    async def run(self, call: ToolCall, ctx: ToolContext, dry: bool) -> tuple[str, str]:
        output = locate(ctx.cwd, ctx.cages, get_str(call.args, "output", 4096))
        if not output.parts or not output.parts[-1].lower().endswith(".zip"):
            raise Refused("argument-value", "the output must be a file name ending in .zip")
        from adjutant.safety.protection import Shield

        try:
            shield = Shield.for_context(ctx, self.declaration)
        except ValueError as exc:  # an unusable deny pattern: fail closed
            raise Refused("protection", f"the deny rules cannot be applied: {exc}") from None
        members: list[tuple[str, bytes]] = []
        skipped: list[str] = []
        withheld: list[tuple[str, str]] = []
        total = 0
        found_sizes: dict[str, int] = {}
        for raw in get_paths(call.args, "paths", 1000):
            located = locate(ctx.cwd, ctx.cages, raw)
            if located.root != output.root:
                raise Refused("cage", "the inputs and the archive must be in the same cage")
            for name, data in self._collect(located, _Found(shield, skipped, withheld,
                                                            found_sizes), read=not dry):
                if name == output.shown:
                    raise Refused("argument-value", "the archive cannot contain itself")
                members.append((name, data))
                total += max(len(data), found_sizes.get(name, 0))  # dry-runs read nothing
                if len(members) > MAX_ENTRIES or total > 10 * self.max_file_bytes:
                    raise Refused("too-large", f"over {MAX_ENTRIES} files or "
                                  f"{10 * self.max_file_bytes} bytes to archive")
        if len({name for name, _ in members}) != len(members):
            raise Refused("argument-value", "a file is listed twice")
        with walk(output, write=True) as opened:
            if opened.st is not None:
                raise Refused("exists", f"{output.shown} exists; it is never overwritten")
            listing = "".join(f"  {name}\n" for name, _ in members) + "".join(
                f"  skipped link: {name}\n" for name in skipped) + "".join(
                f"  withheld (protected): {name}: {why}\n" for name, why in withheld)
            if dry:
                return (f"Zip {len(members)} file(s) into {output.shown}",
                        f"create {output.shown} with {len(members)} file(s):\n{listing}")
            tmp = _build(opened.dir_fd, members)
            try:
                os.link(tmp, opened.name, src_dir_fd=opened.dir_fd, dst_dir_fd=opened.dir_fd,
                        follow_symlinks=False)
            except FileExistsError:
                raise Refused("exists", f"{output.shown} appeared meanwhile; it is never "
                              "overwritten") from None
            finally:
                discard(opened.dir_fd, tmp)
        return f"created {output.shown} with {len(members)} file(s):\n{listing}", ""

    def _collect(self, located: Located, found: _Found,
                 read: bool) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        with walk(located, want="any" if located.parts else "dir") as opened:
            if opened.st is not None and stat.S_ISREG(opened.st.st_mode):
                path = os.path.join(located.root, located.shown)
                if why := found.shield.read_refusal(path, opened.st):
                    raise Refused("protected", f"{located.shown}: {why}")
                if opened.st.st_size > self.max_file_bytes:  # in the dry-run too: the
                    # packet says it will be refused (a 10 GB sparse file got past it)
                    raise Refused("too-large", f"{located.shown} is over "
                                  f"{self.max_file_bytes} bytes")
                found.sizes[located.shown] = opened.st.st_size
                out.append((located.shown, opened.read(self.max_file_bytes) if read else b""))
                return out
            fd = opened.file_fd if opened.file_fd is not None else opened.dir_fd
            self._walk_dir(fd, located.root, list(located.parts), opened.root_dev, found, out,
                           read)
        return out

    def _walk_dir(self, fd: int, root: str, prefix: list[str], dev: int, found: _Found,
                  out: list[tuple[str, bytes]], read: bool) -> None:
        for name in sorted(os.listdir(fd)):
            parts = [*prefix, name]
            shown = "/".join(parts)
            if len(out) > MAX_ENTRIES:
                return
            if why := protected_reason(parts):
                found.withheld.append((shown, why))
                continue  # protected files are left out of a directory, and listed
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                found.skipped.append(shown)
            elif stat.S_ISDIR(st.st_mode):
                if why := found.shield.read_refusal(os.path.join(root, shown), st):
                    found.withheld.append((shown + "/", why))
                    continue
                sub = os.open(name, _DIR, dir_fd=fd)
                try:
                    if os.fstat(sub).st_dev == dev:
                        self._walk_dir(sub, root, parts, dev, found, out, read)
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                ffd = os.open(name, _FILE, dir_fd=fd)
                try:
                    fst = os.fstat(ffd)
                    check_file(fst, dev, shown, write=False)
                    # the opened file itself: a hard link swapped in cannot slip past
                    if why := found.shield.read_refusal(os.path.join(root, shown), fst):
                        found.withheld.append((shown, why))
                        continue
                    if fst.st_size > self.max_file_bytes:
                        raise Refused("too-large", f"{shown} is over {self.max_file_bytes} "
                                      "bytes")
                    found.sizes[shown] = fst.st_size
                    out.append((shown, _read_all(ffd) if read else b""))
                finally:
                    os.close(ffd)


class _Found:
    """What a walk met besides members: the shield judging each, links skipped, files
    withheld (with the reason)."""

    def __init__(self, shield: Any, skipped: list[str],
                 withheld: list[tuple[str, str]], sizes: dict[str, int]) -> None:
        self.sizes = sizes  # each member's size, known before anything is read
        self.shield, self.skipped, self.withheld = shield, skipped, withheld


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _build(dir_fd: int, members: list[tuple[str, bytes]]) -> str:
    """Write the archive to a new temporary file in ``dir_fd``; return its name."""
    import io
    import secrets
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    tmp = f".adjutant-{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644, dir_fd=dir_fd)
    try:
        view = memoryview(buffer.getbuffer())
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        discard(dir_fd, tmp)
        raise
    os.close(fd)
    return tmp

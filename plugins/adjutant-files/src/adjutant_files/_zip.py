"""``compress.zip``: zip files of the cage into a new archive in the cage.

Inputs are read through the cage walk (directories recursively, by file descriptor);
symbolic links are skipped, never followed, and listed in the output. The archive is
built in a temporary file beside the target and linked into place with ``link``,
which fails if the name exists: an existing file is never overwritten.
"""

from __future__ import annotations

import os
import stat

from adjutant_hookspecs import ARG_ROLE, ToolCall, ToolContext, ToolDeclaration, ToolSafety

from ._cage import Located, check_file, discard, locate, protected_reason, walk
from ._common import BaseTool, Refused, get_paths, get_str, path_prop

__all__ = ["CompressZip"]

MAX_ENTRIES = 10000
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class CompressZip(BaseTool):
    declaration = ToolDeclaration(
        name="compress.zip",
        version="0.1.0",
        description=(
            "Create a new zip archive inside the cage from files and directories of the "
            "cage. Never overwrites an existing file; links are skipped, never followed; "
            "protected files are refused. Requests like: 'zip the src folder into "
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
        members: list[tuple[str, bytes]] = []
        skipped: list[str] = []
        total = 0
        for raw in get_paths(call.args, "paths", 1000):
            located = locate(ctx.cwd, ctx.cages, raw)
            if located.root != output.root:
                raise Refused("cage", "the inputs and the archive must be in the same cage")
            for name, data in self._collect(located, skipped, read=not dry):
                if name == output.shown:
                    raise Refused("argument-value", "the archive cannot contain itself")
                members.append((name, data))
                total += len(data)
                if len(members) > MAX_ENTRIES or total > 10 * self.max_file_bytes:
                    raise Refused("too-large", f"over {MAX_ENTRIES} files or "
                                  f"{10 * self.max_file_bytes} bytes to archive")
        if len({name for name, _ in members}) != len(members):
            raise Refused("argument-value", "a file is listed twice")
        with walk(output, write=True) as opened:
            if opened.st is not None:
                raise Refused("exists", f"{output.shown} exists; it is never overwritten")
            listing = "".join(f"  {name}\n" for name, _ in members) + "".join(
                f"  skipped link: {name}\n" for name in skipped)
            if dry:
                return "", f"create {output.shown} with {len(members)} file(s):\n{listing}"
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

    def _collect(self, located: Located, skipped: list[str],
                 read: bool) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        with walk(located, want="any" if located.parts else "dir") as opened:
            if opened.st is not None and stat.S_ISREG(opened.st.st_mode):
                out.append((located.shown, opened.read(self.max_file_bytes) if read else b""))
                return out
            fd = opened.file_fd if opened.file_fd is not None else opened.dir_fd
            self._walk_dir(fd, list(located.parts), opened.root_dev, skipped, out, read)
        return out

    def _walk_dir(self, fd: int, prefix: list[str], dev: int, skipped: list[str],
                  out: list[tuple[str, bytes]], read: bool) -> None:
        for name in sorted(os.listdir(fd)):
            parts = [*prefix, name]
            shown = "/".join(parts)
            if protected_reason(parts) or len(out) > MAX_ENTRIES:
                continue  # protected files are left out of a directory, not refused
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                skipped.append(shown)
            elif stat.S_ISDIR(st.st_mode):
                sub = os.open(name, _DIR, dir_fd=fd)
                try:
                    if os.fstat(sub).st_dev == dev:
                        self._walk_dir(sub, parts, dev, skipped, out, read)
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                ffd = os.open(name, _FILE, dir_fd=fd)
                try:
                    fst = os.fstat(ffd)
                    check_file(fst, dev, shown, write=False)
                    if fst.st_size > self.max_file_bytes:
                        raise Refused("too-large", f"{shown} is over {self.max_file_bytes} "
                                      "bytes")
                    out.append((shown, _read_all(ffd) if read else b""))
                finally:
                    os.close(ffd)


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

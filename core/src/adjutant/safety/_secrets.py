"""Per-install secrets for local servers (``mcp serve --http``, the web dock) and the
tokens of remote sign-ins (MCP OAuth).

Loopback is no boundary: any local process, or a web page through DNS rebinding,
can reach a port on 127.0.0.1. A server that acts for the user asks for a token
only the user can read: a file made once, readable by its owner alone, in a folder
nobody else can swap or enter. A mode on the file proves nothing if a folder on the
way is a link to somewhere else or another user can rename entries in it, so every
folder from the data home down is checked too, without following links.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = ["SecretError", "owner_only_folder", "owner_only_secret", "secret_file_problem"]


class SecretError(PermissionError):
    """A secret, or a folder on its way, that others could read, replace or own; the
    message says what is wrong and what to run."""


def _private_group(gid: int) -> bool:
    """Whether ``gid`` is the user's own private group (named after them, as a umask of
    002 expects: then a group-writable folder is writable by the user alone), like
    OpenSSH's StrictModes allowance."""
    import grp
    import pwd

    try:
        user = pwd.getpwuid(os.getuid()).pw_name
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return gid == os.getgid() and group.gr_name == user and set(group.gr_mem) <= {user}


def _folder_problem(folder: Path, st: os.stat_result, *, last: bool) -> str | None:
    if stat.S_ISLNK(st.st_mode):
        return (f"{folder} is a symbolic link: a secret's folder must be a real folder "
                f"(remove the link: rm {folder})")
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder"
    if st.st_uid != os.getuid():
        return (f"{folder} is owned by uid {st.st_uid}, not you (uid {os.getuid()}): "
                "another user could replace what is in it")
    if st.st_mode & 0o002 or (st.st_mode & 0o020 and not _private_group(st.st_gid)):
        return (f"{folder} can be written by others (mode {st.st_mode & 0o777:o}): "
                f"chmod go-w {folder}")
    if last and st.st_mode & 0o077:
        return (f"{folder} can be entered by others (mode {st.st_mode & 0o777:o}): "
                f"chmod 700 {folder}")
    return None


def owner_only_folder(folder: Path, root: Path) -> Path:
    """``folder`` (under ``root``, the data home) made where missing, mode 0700, and
    checked from ``root`` down: every folder a real one (``root`` itself may be a
    link, the user's choice of data home), owned by the user, writable by nobody else;
    ``folder`` itself closed to others (tightened to 0700 when it is the user's own).

    :raises SecretError: a folder fails; nothing is chmod'ed through a link.
    """
    folder, root = Path(folder), Path(root)
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        raise SecretError(f"{folder} is not under the data home {root}") from None
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    chain = [root, *(root.joinpath(*parts[:i + 1]) for i in range(len(parts)))]
    for i, here in enumerate(chain):
        try:
            st = os.stat(here) if i == 0 else os.lstat(here)
        except FileNotFoundError:
            os.mkdir(here, 0o700)  # fails on a link planted meanwhile: no follow
            st = os.lstat(here)
        last = i == len(chain) - 1
        if last and _folder_problem(here, st, last=False) is None and st.st_mode & 0o077:
            _close_to_others(here)  # ours, real, nobody else writes it: tighten, as
            st = os.lstat(here)     # `mkdir -p` made it 0755 on installs before this
        if problem := _folder_problem(here, st, last=last):
            raise SecretError(problem)
    return folder


def _close_to_others(folder: Path) -> None:
    """chmod 700 through a descriptor opened without following links."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def secret_file_problem(path: Path, st: os.stat_result) -> str | None:
    """Why the opened secret file ``path`` (its ``fstat``) is no secret, or None."""
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file"
    if st.st_uid != os.getuid():
        return (f"{path} belongs to another user (uid {st.st_uid}, you are "
                f"{os.getuid()}), so it is no secret: remove it and a new one is made")
    if st.st_mode & 0o077:
        return (f"{path} can be read by others (mode {st.st_mode & 0o777:o}), so it is "
                "no secret: remove it and a new one is made")
    return None


#: The shortest token accepted from a token file (ours are 43 characters of
#: ``token_urlsafe(32)``, 256 bits): a guessable token guards nothing.
MIN_TOKEN_CHARS = 32
#: The longest accepted (a token is printed in the dock's address).
MAX_TOKEN_CHARS = 512
#: Distinct characters a token needs: 43 random url-safe characters hold about 30
#: (fewer than 16 happens with odds below 1e-12); "password" repeated holds 7.
MIN_DISTINCT = 16


def owner_only_secret(path: Path, root: Path | None = None) -> Path:
    """The file at ``path`` holding a random token, made on first use (mode 0600, in a
    folder checked by `owner_only_folder` from ``root``, by default two levels up:
    ``<data home>/dock/token``). A file others can read, owned by someone else, or
    reached through a link is refused: its token is no secret.

    :raises SecretError: what is wrong, and what to do.
    """
    path = Path(path)
    owner_only_folder(path.parent, root if root is not None else path.parent.parent)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
        return path
    except OSError as exc:
        raise SecretError(f"{path} cannot be opened as a secret ({exc.strerror}; a link "
                          "is never followed): remove it and a new one is made") from None
    try:
        st = os.fstat(fd)
        if problem := secret_file_problem(path, st):
            raise SecretError(problem)
        if st.st_nlink != 1:  # another name for the same file: some other secret, maybe
            raise SecretError(f"{path} has other names (hard links: {st.st_nlink}), so "
                              "its token may be another program's secret: remove it and a "
                              "new one is made")
        raw = os.read(fd, MAX_TOKEN_CHARS + 2)
    finally:
        os.close(fd)
    if problem := _token_problem(raw):
        raise SecretError(f"{path} holds {problem}: remove it and a new one is made")
    return path


def _token_problem(raw: bytes) -> str | None:
    """Why a token file's bytes are no token: empty, not text, several words, too short,
    too long, or guessable (few distinct characters: ``aaaa…``, ``passwordpassword…``)."""
    token = raw.strip()
    if not token:
        return "no token"
    if not all(0x21 <= b < 0x7F for b in token):
        return "a token that is not one word of plain text (letters, digits, punctuation)"
    size = f"{len(token)} character{'' if len(token) == 1 else 's'}"
    if len(token) < MIN_TOKEN_CHARS:
        return f"a weak token ({size}; a token is one word of at least {MIN_TOKEN_CHARS})"
    if len(raw) > MAX_TOKEN_CHARS:
        return f"a token longer than {MAX_TOKEN_CHARS} characters"
    if len(set(token)) < MIN_DISTINCT:
        return (f"a guessable token (only {len(set(token))} different characters; a "
                f"random one has {MIN_DISTINCT} or more)")
    return None

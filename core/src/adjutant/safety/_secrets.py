"""Per-install secrets for local servers (``mcp serve --http``, the web dock).

Loopback is no boundary: any local process, or a web page through DNS rebinding,
can reach a port on 127.0.0.1. A server that acts for the user asks for a token
only the user can read: a file made once, readable by its owner alone.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["owner_only_secret"]


def owner_only_secret(path: Path) -> Path:
    """The file at ``path`` holding a random token, made on first use (mode 0600, its
    folder 0700). A file others can read, or owned by someone else, is refused: its
    token is no secret."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
        return path
    if st.st_mode & 0o077:
        raise PermissionError(f"{path} can be read by others (mode {st.st_mode & 0o777:o}), "
                              "so its token is no secret: remove it and a new one is made")
    if st.st_uid != os.getuid():
        raise PermissionError(f"{path} belongs to another user (uid {st.st_uid}), so its "
                              "token is no secret: remove it and a new one is made")
    return path

"""Run artifacts on disk, and bug bundles with secrets redacted.

Every run keeps its files under ``<home>/runs/YYYY-MM-DD/copilot/<run-id>/``: the
plan, and one JSON file per executed step (result, stdout, stderr, preview). A bug
bundle is a tar.gz of a log slice, the active settings, versions and those
artifacts, with anything that looks like a secret replaced by ``[REDACTED]``.
"""

from __future__ import annotations

import io
import platform
import tarfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:  # the rules load on first use: `adjutant mode` imports this module
    from ..safety.redaction import Redactor

__all__ = ["redact", "run_dir", "write_artifact", "write_bundle"]

def redact(value: Any, redactor: Redactor | None = None) -> Any:
    """A copy of JSON-like data with secrets redacted (`Redactor.value`)."""
    from ..safety.redaction import Redactor

    return (redactor if redactor is not None else Redactor()).value(value)


def run_dir(home: Path, run_id: str, when: float | None = None) -> Path:
    day = time.strftime("%Y-%m-%d", time.gmtime(when if when is not None else time.time()))
    return home / "runs" / day / "copilot" / run_id


def write_artifact(home: Path, run_id: str, name: str, data: Any) -> Path:
    """Write one JSON artifact of a run; returns its path."""
    directory = run_dir(home, run_id)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(msgspec.json.format(msgspec.json.encode(data)))
    return path


def write_bundle(dest: Path, *, home: Path, records: list[dict[str, Any]], profile: Any,
                 versions: dict[str, str], run_ids: set[str]) -> Path:
    """A tar.gz for a bug report; nothing in it is left unredacted. ``dest`` is made
    new (`adjutant.safety.regular.create_new`): never over a file, through a link or
    into a named pipe."""
    from ..safety.regular import create_new

    dest.parent.mkdir(parents=True, exist_ok=True)

    def add(tar: tarfile.TarFile, name: str, payload: bytes) -> None:
        info = tarfile.TarInfo(name)
        info.size, info.mtime = len(payload), int(time.time())
        tar.addfile(info, io.BytesIO(payload))

    from ..safety.redaction import Redactor

    redactor = Redactor()
    with create_new(dest) as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
        log = b"".join(msgspec.json.encode(redact(r, redactor)) + b"\n" for r in records)
        add(tar, "bundle/log.jsonl", log)
        add(tar, "bundle/profile.json", msgspec.json.encode(redact(profile, redactor)))
        add(tar, "bundle/versions.json", msgspec.json.encode(
            {**versions, "python": platform.python_version(), "platform": platform.platform()}))
        for run_id in sorted(run_ids):
            for directory in sorted((home / "runs").glob(f"*/copilot/{run_id}")):
                for file in sorted(directory.iterdir()):
                    if not file.is_file() or file.is_symlink():
                        continue
                    try:
                        data = redact(msgspec.json.decode(file.read_bytes()), redactor)
                        payload = msgspec.json.encode(data)
                    except msgspec.DecodeError:
                        payload = redactor.text(file.read_text(errors="replace")).encode()
                    add(tar, f"bundle/runs/{run_id}/{file.name}", payload)
        # what was hidden, by rule, so whoever reads the bundle knows what is missing
        add(tar, "bundle/redactions.json", msgspec.json.format(msgspec.json.encode({
            "redacted": dict(sorted(redactor.found.items())),
            "total": sum(redactor.found.values()),
            "rules": "gitleaks' default rules, PEM private key blocks, URL credentials, "
                     "Authorization headers, values of secret-named keys and fields",
        })))
    return dest

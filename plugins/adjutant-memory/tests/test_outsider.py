"""An outsider's attack through the public command, with a fake HOME full of marked
secrets used as the project: `adjutant memory index` then `search` for each secret must
find nothing, and no byte of any secret may be in the data home's index files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MARK = "SECRET-MARK-7f3a"


def home_with_secrets(home: Path) -> None:
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARK}1\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key={MARK}2\n")
    (home / ".env").write_text(f"API_TOKEN={MARK}3\n")
    (home / "notes").mkdir()
    (home / "notes" / "todo.md").write_text("buy milk and parse the config\n")
    os.link(home / ".env", home / "notes" / "innocent.txt")  # a hard link to a secret
    (home / "notes" / "link.txt").symlink_to(home / ".aws" / "credentials")


def adjutant(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "ADJUTANT_HOME": str(home / ".local/share/adjutant"),
           "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "adjutant.cli", "memory", *args], cwd=home,
                          env=env, capture_output=True, text=True, timeout=120)


def test_secrets_in_a_home_used_as_the_project_never_reach_the_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home_with_secrets(home)
    indexed = adjutant(home, "index")
    assert indexed.returncode == 0, indexed.stderr
    for query in (MARK, "aws_secret_access_key", "API_TOKEN", "PRIVATE KEY"):
        found = adjutant(home, "search", query, "--json")
        assert found.returncode == 0, found.stderr
        assert MARK not in found.stdout, (query, found.stdout)
    hits = json.loads(adjutant(home, "search", "parse the config", "--json").stdout)
    assert hits  # the ordinary note is indexed: the index works, it just holds no secret
    for folder, _, names in os.walk(home / ".local/share/adjutant"):
        for name in names:
            assert MARK.encode() not in (Path(folder) / name).read_bytes(), name


@pytest.mark.parametrize("name", ["secrets.key", "server.p12", "tls/privkey1.pem",
                                  "client-key.pem", "vault.kdbx"])
def test_a_private_key_file_by_its_name_is_never_indexed(tmp_path: Path, name: str) -> None:
    home = tmp_path / "home"
    (home / name).parent.mkdir(parents=True)
    (home / name).write_text(f"{MARK}4\n")
    assert adjutant(home, "index").returncode == 0
    assert MARK not in adjutant(home, "search", MARK, "--json").stdout

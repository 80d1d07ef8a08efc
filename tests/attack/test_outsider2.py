"""The second outside attack: what a session that never read the code found through
the public interfaces (the CLI, a fake HOME with marked secrets), each kept as a
reproduction that failed on the code it was found on.

1. a named pipe among the files git opens stalled every git preview for its 30 s
   timeout, then reported an empty repository; the context bulletin lost ``git``;
2. a secret used as a JSON *key* (a proposed argument's name) left in the bundle;
3. password forms on command lines in the shell history reached the bulletin;
4. ``adjutant bundle`` hung forever on a named pipe at its output name;
5. ``adjutant bundle`` wrote through a symbolic link at its output name;
6. a one-character (or empty) token file was accepted as the dock's secret;
7. everyday configuration secrets (kubeconfig, Maven, .pgpass, cookies, signed URLs)
   passed the redactor.

The bench lives under ``/var/tmp``: the sandbox mounts a fresh ``/tmp``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tarfile
from pathlib import Path

import pytest

from adjutant.testing import needs_sandbox

from .helpers import MARKER, Attack, plan
from .test_bundle_secrets import read_secrets

#: Well under git's own 30 s timeout: a run that reaches it was stalled by a file.
NO_STALL = 25



def _repository(work: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(work),
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x"}
    for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *argv], cwd=work, env=env, check=True, capture_output=True)


def _special(path: Path, kind: str, bench: Attack) -> None:
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))  # the socket file stays once closed
    else:  # a link to a FIFO elsewhere in the workspace
        target = bench.work / "elsewhere.fifo"
        os.mkfifo(target)
        path.symlink_to(target)


# -- 1. special files among git's -------------------------------------------------------

@needs_sandbox
@pytest.mark.parametrize(("name", "kind"), [(".git/packed-refs", "fifo"),
                                            (".git/info/exclude", "fifo"),
                                            (".gitattributes", "fifo"),
                                            (".git/packed-refs", "link"),
                                            (".gitignore", "socket")])
def test_a_special_file_among_gits_never_stalls_a_preview_and_is_named(
        bench: Attack, name: str, kind: str) -> None:
    _repository(bench.work)
    (bench.work / ".git" / "info").mkdir(exist_ok=True)
    _special(bench.work / name, kind, bench)
    bench.mode("propose-only")
    for tool in ("git.status", "git.diff", "git.log"):
        bench.script(plan((tool, {})))
        done = bench.cli("run", f"show the {tool}", timeout=NO_STALL)
        assert done.returncode == 0, done.stderr
        shown = " ".join((done.stdout + done.stderr).split())  # folded long lines
        assert "special-file" in shown and name in shown, shown
        assert "not a file: git would wait on it forever" in shown
    context = json.loads(bench.cli("context", "--json", check=True, timeout=NO_STALL).stdout)
    assert name in context["git"]["unavailable"], context  # said, not silently dropped


@needs_sandbox
def test_a_named_pipe_deeper_in_the_tree_ends_at_the_bulletins_timeout_with_its_reason(
        bench: Attack) -> None:
    _repository(bench.work)
    (bench.work / "docs").mkdir()
    os.mkfifo(bench.work / "docs" / ".gitignore")  # git status opens it: found only by waiting
    context = json.loads(bench.cli("context", "--json", check=True, timeout=60).stdout)
    assert "did not finish" in context["git"]["unavailable"], context


# -- 2. a secret as a key ----------------------------------------------------------------

#: A GitHub token the model proposes as an argument's *name*.
KEY_TOKEN = "ghp_" + "Q7rX2mV9kL4pZ8wN1sT6yB3cF5hJ0dG8aE2u"


def _members(path: Path) -> str:
    with tarfile.open(path) as tar:
        return "\n".join(tar.extractfile(m).read().decode()  # type: ignore[union-attr]
                         for m in tar.getmembers() if m.isfile())


def test_a_secret_used_as_a_json_key_never_reaches_the_bundle(bench: Attack) -> None:
    (bench.work / "notes.txt").write_text("hello\n")
    bench.mode("propose-only")
    bench.script(plan(("fs.read", {"path": "notes.txt", KEY_TOKEN: "x"})))
    bench.cli("run", "read notes.txt")
    assert any(KEY_TOKEN in json.dumps(r) for r in bench.log())  # the attack reached the log
    out = bench.root / "bundle.tar.gz"
    made = bench.cli("bundle", "-o", str(out))
    assert made.returncode == 0, made.stderr
    everything = _members(out)
    assert KEY_TOKEN not in everything
    assert "[REDACTED]" in everything


# -- 3. passwords on command lines in the shell history ----------------------------------

HISTORY = [("mysql -uroot -p{s} shop", "Mysq1{m}"),
           ("sshpass -p {s} ssh deploy@web1", "Sshp{m}"),
           ("redis-cli -h cache -a {s} ping", "Redis{m}"),
           ("docker login -u me -p {s} registry.example.com", "Dock{m}"),
           ("echo {s} | sudo -S systemctl restart nginx", "Sudo{m}"),
           ("ldapsearch -x -D cn=admin,dc=ex -w {s} -b dc=ex", "Ldap{m}"),
           ("openssl rsa -in key.pem -passin pass:{s} -out plain.pem", "Ossl{m}"),
           ("curl -u alice:{s} https://api.example.com/v1", "Curl{m}"),
           ("htpasswd -b .htpasswd bob {s}", "Htpw{m}"),
           ("psql --password {s} -h db", "Psql{m}"),
           ("smbclient //nas/share -U bob%{s}", "Smb{m}"),
           ("nmcli dev wifi connect Home password {s}", "Wifi{m}")]


def test_passwords_typed_on_command_lines_never_reach_the_bulletin(bench: Attack) -> None:
    secrets = [secret.format(m=MARKER.replace("-", "")) for _, secret in HISTORY]
    lines = [command.format(s=s) for (command, _), s in zip(HISTORY, secrets, strict=True)]
    for start in range(0, len(lines), 4):  # the bulletin keeps the last few commands
        chunk = lines[start:start + 4]
        (bench.home / ".bash_history").write_text("\n".join(["ls", *chunk, "make test"]) + "\n")
        done = bench.cli("context", "--json", check=True)
        shell = json.loads(done.stdout)["recent_shell"]
        assert "make test" in shell, shell
        assert len([line for line in shell if "[REDACTED]" in line]) == len(chunk), shell
        leaked = [s for s in secrets if s in done.stdout]
        assert leaked == [], leaked


# -- 4 and 5. the bundle's output name ---------------------------------------------------

def test_the_bundle_never_blocks_on_a_named_pipe_at_its_output_name(bench: Attack) -> None:
    os.mkfifo(bench.work / "adjutant-bundle.tar.gz")
    done = bench.cli("bundle", timeout=NO_STALL)
    assert done.returncode == 1 and "already exists" in done.stderr, done.stderr
    assert (bench.work / "adjutant-bundle.tar.gz").is_fifo()


@pytest.mark.parametrize("given", [None, "link.tar.gz", "dangling.tar.gz"])
def test_the_bundle_never_writes_through_a_link(bench: Attack, given: str | None) -> None:
    bashrc = bench.home / ".bashrc"
    before = bashrc.read_bytes()
    name = given or "adjutant-bundle.tar.gz"
    target = bench.home / "nothing-yet" if given == "dangling.tar.gz" else bashrc
    (bench.work / name).symlink_to(target)
    done = bench.cli("bundle", *(["-o", name] if given else []))
    assert done.returncode == 1 and "already exists" in done.stderr, done.stderr
    assert bashrc.read_bytes() == before and not (bench.home / "nothing-yet").exists()
    # a new name works, and is private
    made = bench.cli("bundle", "-o", "fresh.tar.gz")
    assert made.returncode == 0, made.stderr
    assert (bench.work / "fresh.tar.gz").stat().st_mode & 0o077 == 0


# -- 6. weak token files -----------------------------------------------------------------

@pytest.mark.parametrize("token", ["", "x\n", "0123456789\n", "two words but long enough..\n"])
@pytest.mark.parametrize("command", [("dock", "--no-browser", "--port", "0"),
                                     ("mcp", "serve", "--http", "--port", "0")])
def test_a_weak_token_file_is_refused(bench: Attack, token: str,
                                      command: tuple[str, ...]) -> None:
    if command[0] == "dock":
        pytest.importorskip("adjutant_dock")
        path = bench.data / "dock" / "token"
    else:
        pytest.importorskip("adjutant_mcp")
        path = bench.data / "mcp" / "serve-token"
    bench.data.chmod(0o700)
    path.parent.mkdir(mode=0o700)
    path.write_text(token)
    path.chmod(0o600)
    done = bench.cli(*command, timeout=60)
    assert done.returncode != 0, done.stderr
    assert "token" in done.stderr and "remove it and a new one is made" in done.stderr, \
        done.stderr


# -- 7. everyday configuration secrets ---------------------------------------------------

CONFIG = Path(__file__).resolve().parents[1] / "fixtures" / "config_secrets.jsonl"


def test_everyday_configuration_secrets_never_reach_the_bundle(bench: Attack) -> None:
    cases = read_secrets(bench, CONFIG)
    out = bench.root / "bundle.tar.gz"
    assert bench.cli("bundle", "-o", str(out)).returncode == 0
    everything = _members(out)
    leaked = [c["kind"] for c in cases if c["secret"] in everything]
    assert leaked == [], leaked


@pytest.mark.parametrize("name", ["server.key", "certs/privkey.pem", "store.p12"])
def test_a_private_key_file_by_its_name_is_never_read(bench: Attack, name: str) -> None:
    (bench.work / name).parent.mkdir(parents=True, exist_ok=True)
    (bench.work / name).write_text(f"-----BEGIN RSA PRIVATE KEY-----\n{MARKER}\n")
    bench.mode("execute-with-confirmation")  # reads run without a question
    bench.script(plan(("fs.read", {"path": name})))
    done = bench.cli("run", f"show me {name}", "--json")
    assert MARKER not in done.stdout + done.stderr
    assert "private key" in done.stdout + done.stderr, done.stdout

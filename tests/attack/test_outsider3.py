"""The third outside attack (a session that read no code, only the docs and --help):
redaction of bundles, exports and the context bulletin; output files; git's special
files; token files; private keys by name. Each test drives the real ``adjutant``
command with a fake HOME, data home and workspace under /var/tmp, and failed on the
code it was found on; what is still open is a strict xfail saying what breaks.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

ADJ = str(Path(sys.executable).with_name("adjutant"))
MARK = "SECRET-MARKER-9c1e"


class Env:
    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="atk3-", dir="/var/tmp"))
        self.home, self.data = self.root / "home", self.root / "data"
        self.ws, self.plug = self.root / "ws", self.root / "plug"
        di = self.plug / "scripted_attack-0.dist-info"
        for d in (self.home / ".ssh", self.home / ".aws", self.ws, di, self.data / "profiles"):
            d.mkdir(parents=True, exist_ok=True)
        os.chmod(self.data, 0o700)
        (di / "METADATA").write_text("Metadata-Version: 2.1\nName: scripted-attack\nVersion: 0\n")
        (di / "entry_points.txt").write_text("[adjutant]\nscripted = adjutant.testing.scriptfile\n")
        (self.data / "profiles" / "default.json").write_text(
            json.dumps({"model": {"provider": "script-file", "model": "script"}})
        )
        (self.home / ".ssh" / "id_rsa").write_text(
            f"-----BEGIN RSA PRIVATE KEY-----\n{MARK}\n-----END RSA PRIVATE KEY-----\n"
        )
        (self.home / ".aws" / "credentials").write_text(
            f"[default]\naws_secret_access_key = {MARK}\n"
        )
        (self.ws / ".env").write_text(f"API_KEY={MARK}\n")
        (self.ws / "notes.txt").write_text("buy milk\n")
        self.script = self.root / "script.json"
        self.script.write_text("[]")

    def env(self, **extra):
        e = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")}
        e.update(
            HOME=str(self.home),
            ADJUTANT_HOME=str(self.data),
            ADJUTANT_WORKSPACE=str(self.ws),
            PYTHONPATH=str(self.plug),
            ADJUTANT_SCRIPT=str(self.script),
        )
        e.update(extra)
        return e

    def replies(self, *plans):
        self.script.write_text(
            json.dumps([p if isinstance(p, str) else json.dumps(p) for p in plans])
        )

    def run(self, *args, timeout=120, **kw):
        return subprocess.run(
            [ADJ, *args],
            cwd=self.ws,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            **kw,
        )

    def export(self):
        r = self.run("log", "export", "--output", "-")
        assert r.returncode == 0, r.stderr
        return r.stdout

    def bundle(self):
        out = self.root / "bundle.tar.gz"
        r = self.run("bundle", "-o", str(out))
        assert r.returncode == 0, r.stderr
        with tarfile.open(out) as tf:
            return "".join(
                tf.extractfile(m).read().decode("utf-8", "replace")
                for m in tf.getmembers()
                if m.isfile()
            )

    def cleanup(self):
        subprocess.run(["chmod", "-R", "u+rwX", str(self.root)], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def env():
    e = Env()
    yield e
    e.cleanup()


def _read_files_then_share(env, files):
    """Write FILES (name -> text) in the workspace, read each with fs.read in one
    executed plan, and return (export text, bundle text)."""
    for name, text in files.items():
        (env.ws / name).write_text(text)
    env.run("mode", "execute-with-confirmation")
    env.replies(
        {"type": "plan", "steps": [{"tool": "fs.read", "args": {"path": n}} for n in files]}
    )
    r = env.run("run", "read the config files")
    assert r.returncode == 0, r.stdout + r.stderr
    return env.export(), env.bundle()


def _leaked(texts, secrets):
    return [s for s in secrets if any(s in t for t in texts)]


# --------------------------------------------------------------------------- redaction


def test_yaml_block_scalar_secret_leaks(env):
    """Found: a secret-named YAML key with a block scalar (| or >-) value: only the
    indicator is redacted, the multi-line secret itself reaches the export and the
    bundle."""
    exp, bun = _read_files_then_share(
        env,
        {
            "app.yaml": "db:\n  password: |\n    Hj6kLp9qWe2rTz4m\n",
            "app2.yaml": "db_password: >-\n  Gq7rTz2mKx9LpW3v\n",
        },
    )
    assert not _leaked([exp, bun], ["Hj6kLp9qWe2rTz4m", "Gq7rTz2mKx9LpW3v"])


def test_base64_encoded_private_key_leaks(env):
    """Found: a base64-encoded PEM private key (Kubernetes tls.key, a .pem pasted as
    base64) is not recognised: the key reaches the export and the bundle."""
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAq8Wv3Rr5Tz2Kx9Lm4Np7Qs1Uv6Yw0Ab3Cd8Ef\n"
        "-----END RSA PRIVATE KEY-----\n"
    )
    b64 = base64.b64encode(pem.encode()).decode()
    exp, bun = _read_files_then_share(
        env,
        {
            "tls.yaml": "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n"
            f"  tls.crt: AAAA\n  tls.key: {b64}\n",
        },
    )
    assert not _leaked([exp, bun], [b64[16:64]])


def test_putty_private_key_leaks(env):
    """Found: a PuTTY private key (.ppk format, read under an innocent name) is not
    recognised: its Private-Lines reach the export and the bundle."""
    priv = "AAAAgQDq8Wv3Rr5Tz2Kx9Lm4Np7Qs1Uv6Yw0Ab3Cd8EfGh2Jk4Lm6Np8Qr0St"
    exp, bun = _read_files_then_share(
        env,
        {
            "server-key.txt": "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n"
            "Comment: deploy\n"
            "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIK\nPrivate-Lines: 1\n"
            f"{priv}\nPrivate-MAC: 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c\n",
        },
    )
    assert not _leaked([exp, bun], [priv])


def test_aws_secret_access_key_without_a_name_leaks(env):
    """Found: the AWS console's accessKeys.csv (and a secret key on the line after its
    AKIA id): the access key id is redacted, the 40-character secret access key is
    not."""
    sec1 = "xJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8tW4kLmN"
    sec2 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8tW4kLmQ"
    exp, bun = _read_files_then_share(
        env,
        {
            "accessKeys.csv": f"Access key ID,Secret access key\nAKIAQ3EGT7PL5XK2R4NZ,{sec1}\n",
            "keys.txt": f"AKIAQ3EGT7PL5XK2R4NA\n{sec2}\n",
        },
    )
    assert not _leaked([exp, bun], [sec1, sec2])


def test_quoted_passphrase_with_spaces_partly_leaks(env):
    """Found: a quoted password containing spaces (DB_PASSWORD="correct horse battery
    staple"): only the first word is redacted, the rest of the passphrase leaks."""
    exp, bun = _read_files_then_share(
        env,
        {
            "deploy.env.txt": 'DB_PASSWORD="correct horse battery staple"\n',
            "app.yaml": 'password: "Tz8q Km5t Rn2L Wv7x"\n',
        },
    )
    assert not _leaked([exp, bun], ["battery staple", "Rn2L Wv7x"])


def test_sql_password_literals_leak(env):
    """Found: passwords in SQL (CREATE USER ... IDENTIFIED BY '...', CREATE ROLE ...
    PASSWORD '...') are not redacted."""
    exp, bun = _read_files_then_share(
        env,
        {
            "grant.sql": "CREATE USER 'app'@'%' IDENTIFIED BY 'Vb8nMq3wEr6t';\n",
            "roles.sql": "CREATE ROLE app LOGIN PASSWORD 'Nm9bVc4xZa7s';\n",
        },
    )
    assert not _leaked([exp, bun], ["Vb8nMq3wEr6t", "Nm9bVc4xZa7s"])


def test_secret_named_key_with_a_list_value_leaks(env):
    """Found: a secret-named key whose value is a list (JSON "passwords": [...], YAML
    api_keys: / secrets: with - items) keeps every item."""
    exp, bun = _read_files_then_share(
        env,
        {
            "p.json": '{"passwords": ["Qw7eRt5yUi3o"]}\n',
            "keys.yaml": "api_keys:\n  - Zz6qKm3tRn8LpX2v\n",
        },
    )
    assert not _leaked([exp, bun], ["Qw7eRt5yUi3o", "Zz6qKm3tRn8LpX2v"])


def test_subscript_secret_key_and_pat_variable_leak(env):
    """Found: a secret set by subscript (Flask app.config['SECRET_KEY'] = '...') or a
    variable named ..._PAT (AZURE_DEVOPS_PAT=...) is not redacted."""
    exp, bun = _read_files_then_share(
        env,
        {
            "app.py": "app.config['SECRET_KEY'] = 'Gh7jKl2mNb5v'\n",
            "ado.sh": "AZURE_DEVOPS_PAT=q7w8e9r0t1y2u3i4o5p6a7s8d9f0g1h2j3k4l5z6x7c8v9b0n1m2\n",
        },
    )
    assert not _leaked(
        [exp, bun], ["Gh7jKl2mNb5v", "q7w8e9r0t1y2u3i4o5p6a7s8d9f0g1h2j3k4l5z6x7c8v9b0n1m2"]
    )


ARGV_CASES = {
    "Ak1sLd2fJg3h": ["sshpass", "-p", "Ak1sLd2fJg3h", "ssh", "host"],
    "Bk2sLd3fJg4h": ["redis-cli", "-a", "Bk2sLd3fJg4h"],
    "Ck3sLd4fJg5h": ["docker", "login", "-u", "bob", "-p", "Ck3sLd4fJg5h"],
    "Dk4sLd5fJg6h": ["mysql", "--password", "Dk4sLd5fJg6h"],
    "Ek5sLd6fJg7h": ["curl", "-u", "bob:Ek5sLd6fJg7h", "https://example.com"],
    "Fk6sLd7fJg8h": ["ldapsearch", "-w", "Fk6sLd7fJg8h"],
    "Gk7sLd8fJg9h": ["mysql", "-uroot", "-pGk7sLd8fJg9h"],
}


def test_shell_exec_argv_passwords_leak(env):
    """Found: the command-line password rules (sshpass -p, redis-cli -a, docker login
    -p, --password, curl -u, ldapsearch -w, mysql -p) do not apply to shell.exec's
    argv array: a planned command's password reaches the export and the bundle
    verbatim."""
    env.replies(
        *[
            {"type": "plan", "steps": [{"tool": "shell.exec", "args": {"argv": v}}]}
            for v in ARGV_CASES.values()
        ]
    )
    for _ in ARGV_CASES:
        env.run("run", "connect")  # propose-only: the plan is logged, nothing runs
    exp, bun = env.export(), env.bundle()
    assert not _leaked([exp, bun], list(ARGV_CASES))


HISTORY = {
    "Mn8bVc9xZa1s": "gpg --batch --passphrase Mn8bVc9xZa1s -d file.gpg",
    "Lo5pAs6dFg7h": "SSHPASS=Lo5pAs6dFg7h sshpass -e ssh bob@h",
    "Zx2cVb3nMq4w": "zip -P Zx2cVb3nMq4w secret.zip file.txt",
    "Op2aSd3fGh4j": "openssl enc -aes-256-cbc -k Op2aSd3fGh4j -in a -out b",
    "Nm2qWe3rTy4u": "keytool -list -keystore ks.jks -storepass Nm2qWe3rTy4u",
    "Fr8gTh9yJu1i": "npm config set //registry.npmjs.org/:_authToken Fr8gTh9yJu1i",
    "Ju8kIl9oLp1a": "twine upload -u __token__ -p Ju8kIl9oLp1a dist/*",
    "Pa2sDf3gHj4k": "echo 'bob:Pa2sDf3gHj4k' | chpasswd",
    "Ui5oPa6sDf7g": "ssh-keygen -t ed25519 -N Ui5oPa6sDf7g -f k",
    "Mq8wEr9tYu1i": "vault login Mq8wEr9tYu1i",
}


def test_shell_history_passwords_reach_the_bulletin(env):
    """Found: passwords typed in the shell history in common forms (gpg --passphrase,
    SSHPASS=, zip -P, openssl -k, keytool -storepass, npm _authToken, twine -p,
    chpasswd, ssh-keygen -N, vault login) reach `adjutant context --json` (the
    bulletin sent to the model)."""
    (env.home / ".bash_history").write_text("\n".join(HISTORY.values()) + "\n")
    r = env.run("context", "--json")
    assert r.returncode == 0, r.stderr
    shell = json.loads(r.stdout)["recent_shell"]
    assert len(shell) == len(HISTORY)
    assert not _leaked([r.stdout], list(HISTORY))


def test_request_text_passphrase_leaks(env):
    """Found: a passphrase in the request text (`gpg --passphrase X`), a form the doc
    says is covered, reaches the export and the bundle in the prompt record."""
    env.replies({"type": "response", "text": "ok"})
    r = env.run("run", "decrypt it: gpg --batch --passphrase Yz5xUc6iVo7p -d backup.gpg")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not _leaked([env.export(), env.bundle()], ["Yz5xUc6iVo7p"])


# --------------------------------------------------------------------------- private keys by name

PEM = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARK}\n-----END OPENSSH PRIVATE KEY-----\n"
KEY_NAMES = [
    "id_rsa.old",
    "id_rsa~",
    "private.pem",
    "AuthKey_ABC123.p8",
    "cert.pkcs12",
    "deploy_key",
    "ssh_host_rsa_key",
    "secring.gpg",
]


def test_fs_read_returns_keys_under_common_key_names(env):
    """Found: fs.read returns private keys under well-known key names the deny rules
    miss (id_rsa.old, id_rsa~, private.pem, AuthKey_*.p8, *.pkcs12, deploy_key,
    ssh_host_rsa_key, secring.gpg) while id_ed25519, key.pem, server-key.pem, *.p12
    are refused."""
    for n in KEY_NAMES:
        (env.ws / n).write_text(PEM)
    env.run("mode", "execute-with-confirmation")
    env.replies(
        {"type": "plan", "steps": [{"tool": "fs.read", "args": {"path": n}} for n in KEY_NAMES]}
    )
    r = env.run("run", "show me the key files")
    assert "fs.read: ok" not in r.stdout, r.stdout + r.stderr
    assert MARK not in r.stdout + r.stderr
    assert "private key" in r.stdout + r.stderr


def test_search_grep_reads_keys_under_common_key_names(env):
    """Found: search.grep shows the lines of private keys named id_rsa.old,
    private.pem, AuthKey_*.p8 (its --iglob list knows id_ed25519 and key.pem only)."""
    (env.ws / "keys").mkdir()
    for n in ["id_rsa.old", "private.pem", "AuthKey_ABC123.p8", "id_ed25519"]:
        (env.ws / "keys" / n).write_text(PEM)
    env.run("mode", "execute-with-confirmation")
    env.replies(
        {"type": "plan", "steps": [{"tool": "search.grep", "args": {"pattern": "SECRET-MARKER"}}]}
    )
    r = env.run("run", "where is the marker?")
    assert "search.grep: ok" in r.stdout, r.stdout + r.stderr
    assert MARK not in r.stdout


# --------------------------------------------------------------------------- git special files


def _repo(env):
    def g(*a):
        subprocess.run(["git", "-C", str(env.ws), *a], capture_output=True, check=True)

    g("init", "-q", "-b", "main")
    g("config", "user.email", "a@example.com")
    g("config", "user.name", "a")
    (env.ws / "sub").mkdir()
    (env.ws / "sub" / "f.txt").write_text("x\n")
    g("add", "notes.txt", "sub/f.txt")
    g("commit", "-qm", "init")
    return g


def test_excludesfile_fifo_is_not_named(env):
    """Found: core.excludesFile naming a FIFO in the work tree is not checked: the
    bulletin's git waits its 5 s and says only 'git status did not finish', never
    naming the pipe."""
    g = _repo(env)
    os.mkfifo(env.ws / "ignores")
    g("config", "core.excludesFile", "ignores")
    r = env.run("context", "--json")
    git = json.loads(r.stdout)["git"]
    assert git and git["unavailable"], git
    assert "ignores" in git["unavailable"], git["unavailable"]


def test_subfolder_gitignore_fifo_cause_not_named_in_bulletin(env):
    """Found: a FIFO .gitignore (or .gitattributes) in a sub-folder: the bulletin's
    git.unavailable says only 'git status did not finish in 5 s', not why (the
    guarantee says the likely cause is named)."""
    _repo(env)
    os.mkfifo(env.ws / "sub" / ".gitignore")
    r = env.run("context", "--json")
    git = json.loads(r.stdout)["git"]
    assert git and git["unavailable"], git
    assert ".gitignore" in git["unavailable"] or "pipe" in git["unavailable"], git["unavailable"]


def test_loose_object_fifo_stalls_git_log_beyond_30s(env):
    """Found: a FIFO in place of HEAD's loose commit object: git.log stalls `adjutant
    run` for about 70 s (two 30 s git timeouts), and blames 'a .gitignore in a
    folder'."""
    _repo(env)
    head = subprocess.run(
        ["git", "-C", str(env.ws), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    obj = env.ws / ".git" / "objects" / head[:2] / head[2:]
    os.chmod(obj, 0o644)
    obj.unlink()
    os.mkfifo(obj)
    env.run("mode", "execute-with-confirmation")
    env.replies({"type": "plan", "steps": [{"tool": "git.log", "args": {}}]})
    t = time.monotonic()
    r = env.run("run", "recent commits", timeout=180)
    elapsed = time.monotonic() - t
    assert elapsed < 40, f"stalled {elapsed:.0f} s: {r.stdout[-400:]}"
    assert head[2:] in r.stdout + r.stderr or "objects" in r.stdout + r.stderr


# --------------------------------------------------------------------------- output files


def test_bundle_output_with_trailing_slash_writes_a_file(env):
    """Found: `adjutant bundle -o NEWDIR/` (a trailing slash: a folder meant) writes a
    file named NEWDIR instead of refusing; `log export` says 'Is a directory'."""
    env.replies({"type": "response", "text": "ok"})
    env.run("run", "hello")
    target = env.root / "outdir"
    r = env.run("bundle", "-o", str(target) + "/")
    assert not target.exists(), (r.returncode, r.stdout, r.stderr)
    assert r.returncode == 1 and "is a folder" in r.stderr, r.stderr


# --------------------------------------------------------------------------- token files


def _serve(env, args, until, wait=25):
    """Start ARGS, read its output until UNTIL appears or it exits; stop it; return
    (text, exit code)."""
    import threading

    p = subprocess.Popen(
        [ADJ, *args],
        cwd=env.ws,
        env=env.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    buf = []

    def pump():
        for line in iter(p.stdout.readline, b""):
            buf.append(line.decode("utf-8", "replace"))

    th = threading.Thread(target=pump, daemon=True)
    th.start()
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and p.poll() is None and until not in "".join(buf):
        time.sleep(0.2)
    time.sleep(0.5)
    if p.poll() is None:
        os.killpg(p.pid, 15)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()
    th.join(5)
    p.stdout.close()
    return "".join(buf), p.returncode


def _token(env, rel, text):
    p = env.data / rel
    p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(p.parent, 0o700)
    p.write_text(text)
    os.chmod(p, 0o600)
    return p


def test_dock_accepts_a_guessable_token(env):
    """Found: a token file of 32 identical letters (or 'password' x4) is accepted by
    `adjutant dock`: the strength check is only 'one word of at least 32
    characters'."""
    _token(env, "dock/token", "a" * 32 + "\n")
    out, _rc = _serve(env, ["dock", "--no-browser", "--port", "0"], "token=")
    assert "token=" + "a" * 32 not in out, out


def test_mcp_serve_accepts_a_guessable_token(env):
    """Found: `adjutant mcp serve --http` accepts 'passwordpasswordpasswordpassword' as
    its bearer token."""
    _token(env, "mcp/serve-token", "password" * 4)
    out, rc = _serve(env, ["mcp", "serve", "--http", "--port", "0"], "/mcp")
    assert "weak" in out or rc not in (None, 0, -15), out


def test_dock_token_hard_link_to_another_secret_is_used_and_printed(env):
    """Found: the dock's token file may be a hard link to another secret (~/.vault-
    token): a symlink is refused but the hard link is used, and the dock prints that
    secret in its URL."""
    vault = env.home / ".vault-token"
    secret = "hvs.CAESIJk8mWq3tRn6LpX2vYb9Hd4Fg7Jc1Ae5SxQ0UZk8mWq3tRn6"
    vault.write_text(secret)
    os.chmod(vault, 0o600)
    (env.data / "dock").mkdir(mode=0o700)
    os.link(vault, env.data / "dock" / "token")
    out, _rc = _serve(env, ["dock", "--no-browser", "--port", "0"], "token=")
    assert secret not in out, out


def test_binary_token_file_error_is_unclear(env):
    """Found: a binary token file gives a bare Python error ("'utf-8' codec can't
    decode byte 0xff...") that names neither the file nor what to do."""
    p = env.data / "dock" / "token"
    p.parent.mkdir(mode=0o700)
    p.write_bytes(b"\x00\xff" * 40)
    os.chmod(p, 0o600)
    out, rc = _serve(env, ["dock", "--no-browser", "--port", "0"], "token=")
    assert rc == 1, out
    assert str(p) in out, out


def test_mcp_serve_port_zero_prints_port_zero(env):
    """Found: `adjutant mcp serve --http --port 0` prints http://127.0.0.1:0/mcp, not
    the port it actually listens on, so no client can find it."""
    out, _rc = _serve(env, ["mcp", "serve", "--http", "--port", "0"], "/mcp")
    assert "/mcp" in out, out
    assert "127.0.0.1:0/" not in out, out


# --------------------------------------------------------------------------- more redaction


def test_kubernetes_name_value_env_pairs_leak(env):
    """Found: name/value environment pairs (Kubernetes `env: - name: DB_PASSWORD value:
    ...`, ECS `{"name": "DB_PASSWORD", "value": ...}`) keep the value: the key is
    'value', the secret name sits in the sibling 'name'."""
    exp, bun = _read_files_then_share(
        env,
        {
            "deployment.yaml": "containers:\n- name: app\n  env:\n  - name: DB_PASSWORD\n"
            "    value: Bh7gVf6cDx5s\n"
            '  - name: API_TOKEN\n    value: "Cj8hBg7fVd6c"\n',
            "task-def.json": '{"environment": [{"name": "DB_PASSWORD", '
            '"value": "Dk9jCh8gBf7v"}]}\n',
        },
    )
    assert not _leaked([exp, bun], ["Bh7gVf6cDx5s", "Cj8hBg7fVd6c", "Dk9jCh8gBf7v"])


def test_encoded_and_embedded_secrets_in_tool_arguments_leak(env):
    """Found: in a planned tool's arguments, a percent-encoded connection string
    (postgres%3A%2F%2Fapp%3APW%40db), a JSON document held in a string, and a YAML
    block scalar keep their passwords in the export and the bundle."""
    import urllib.parse

    inputs = {
        "u": urllib.parse.quote("postgres://app:Mn5bVc4xZa3s@db/app", safe=""),
        "cfg": json.dumps({"password": "Po0iUy9tRe8w"}),
        "yml": "db:\n  password: |\n    Qa1sWd2eFr3g\n",
    }
    env.replies(
        {
            "type": "plan",
            "steps": [
                {"tool": "schedule.task", "args": {"capability": "doc.summarize", "inputs": inputs}}
            ],
        }
    )
    env.run("run", "summarize later")  # propose-only: the plan is logged
    assert not _leaked(
        [env.export(), env.bundle()], ["Mn5bVc4xZa3s", "Po0iUy9tRe8w", "Qa1sWd2eFr3g"]
    )


def test_config_include_fifo_drops_git_silently_and_stalls(env):
    """Found: include.path (in .git/config) naming a FIFO inside the cage: the bulletin
    silently drops git ("git": null, no reason) after a 5 s stall, and git.status
    stalls `adjutant run` for about 70 s, blaming 'a .gitignore in a folder'."""
    g = _repo(env)
    os.mkfifo(env.ws / "inc.cfg")
    g("config", "include.path", "../inc.cfg")
    r = env.run("context", "--json")
    git = json.loads(r.stdout)["git"]
    assert git is not None and "inc.cfg" in (git.get("unavailable") or ""), git
    env.run("mode", "execute-with-confirmation")
    env.replies({"type": "plan", "steps": [{"tool": "git.status", "args": {}}]})
    t = time.monotonic()
    r = env.run("run", "status?", timeout=180)
    assert time.monotonic() - t < 40, r.stdout[-400:]


HISTORY2 = {
    "Cc3fFg4gHh5h": "aws configure set aws_secret_access_key Cc3fFg4gHh5h",
    "Dd4gGh5hJj6j": "gh secret set DB_PASSWORD --body Dd4gGh5hJj6j",
    "Gg7kKl8lZz9z": "echo Gg7kKl8lZz9z | docker login --username bob --password-stdin",
    "Hh8lLz9zXx1x": "printf '%s' 'Hh8lLz9zXx1x' | gh auth login --with-token",
    "Kk1xXc2cVv3v": "ssh -i key bob@host 'echo Kk1xXc2cVv3v | sudo -S reboot'",
}


def test_shell_history_piped_and_configured_secrets_reach_the_bulletin(env):
    """Found: shell history: `aws configure set aws_secret_access_key X`, `gh secret
    set NAME --body X`, a secret piped into `docker login --password-stdin` or `gh
    auth login --with-token`, and `echo X | sudo -S` inside ssh's quoted command
    reach the bulletin."""
    (env.home / ".bash_history").write_text("\n".join(HISTORY2.values()) + "\n")
    r = env.run("context", "--json")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["recent_shell"]) == len(HISTORY2)
    assert not _leaked([r.stdout], list(HISTORY2))

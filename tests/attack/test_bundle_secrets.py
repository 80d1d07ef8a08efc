"""The bug bundle carries no secret the user's files held.

Reproduced from outside: a workspace file holding common secret formats, read with
``fs.read``, then ``adjutant bundle``: nine of eleven formats came out unredacted
(``aws_secret_access_key = ...``, ``db_password=...``, ``GITHUB_TOKEN=...``, a
``postgres://admin:...@`` URL). The bundle now passes every string through
`adjutant.safety.redaction` (gitleaks' rules and Adjutant's own) and says in
``bundle/redactions.json`` what it hid. ``adjutant log export --output FILE`` makes the
same redacted copy of a day's log for sharing; the data home itself, which holds the
unredacted log, is made private (mode 0700). The fixture is `tests/fixtures/secrets.jsonl`
(34 formats); `bench/redaction.py` prints the recall on it and on a held-out set.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from .helpers import Attack, plan

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "secrets.jsonl"


def read_secrets(attack: Attack, fixture: Path = FIXTURE) -> list[dict[str, str]]:
    """Plant the fixture's formats in a workspace file and read it with ``fs.read``."""
    cases = [json.loads(line) for line in fixture.read_text().splitlines() if line.strip()]
    assert len(cases) >= 30
    (attack.work / "settings.env").write_text("\n".join(c["text"] for c in cases) + "\n")
    attack.mode("execute-with-confirmation")  # reads run without a question
    attack.script(plan(("fs.read", {"path": "settings.env"})))
    done = attack.cli("run", "show me settings.env", "--json")
    assert json.loads(done.stdout)["status"] == "executed", done.stderr
    assert cases[0]["secret"] in done.stdout  # the user sees their own file, whole
    return cases


def test_no_fixture_secret_leaves_in_the_bundle(attack: Attack) -> None:
    cases = read_secrets(attack)
    out = attack.root / "bundle.tar.gz"
    made = attack.cli("bundle", "-o", str(out))
    assert made.returncode == 0, made.stderr
    with tarfile.open(out) as tar:
        members = {m.name: tar.extractfile(m).read().decode()  # type: ignore[union-attr]
                   for m in tar.getmembers() if m.isfile()}
    everything = "\n".join(members.values())
    leaked = [c["kind"] for c in cases if c["secret"] in everything]
    assert leaked == [], leaked
    manifest = json.loads(members["bundle/redactions.json"])
    assert manifest["total"] >= len(cases) and manifest["redacted"], manifest


def test_a_shared_log_export_is_redacted_and_the_data_home_is_private(attack: Attack) -> None:
    """``log export --output`` leaked every format (it had no redaction), and the data
    home holding the log was made 0755 under a usual umask: readable by other users."""
    cases = read_secrets(attack)
    lmdb = attack.data / "lmdb"
    assert all(p.stat().st_mode & 0o077 == 0 for p in (lmdb, *lmdb.iterdir())), [
        (p.name, oct(p.stat().st_mode)) for p in lmdb.iterdir()]
    out = attack.root / "today.jsonl"
    done = attack.cli("log", "export", "--output", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines and all({"index", "hash", "prev_hash"} <= line.keys() for line in lines)
    leaked = [c["kind"] for c in cases if c["secret"] in text]
    assert leaked == [], leaked
    assert "redacted" in done.stderr and "secret(s)" in done.stderr, done.stderr
    # the same file is never overwritten; standard output works too
    again = attack.cli("log", "export", "--output", str(out))
    assert again.returncode == 1 and "exists" in again.stderr, again.stderr
    piped = attack.cli("log", "export", "-o", "-")
    assert piped.returncode == 0 and piped.stdout.count("\n") == len(lines)
    assert not [c["kind"] for c in cases if c["secret"] in piped.stdout]
    bad = attack.cli("log", "export", "--day", "yesterday", "-o", str(attack.root / "x"))
    assert bad.returncode == 2 and "YYYY-MM-DD" in bad.stderr and not (attack.root / "x").exists()
    # the data home's own copy stays whole, and says so
    own = attack.cli("log", "export")
    assert own.returncode == 0 and "not redacted" in own.stdout, own.stdout
    day_file = next((attack.data / "logs").glob("*.jsonl"))
    assert day_file.stat().st_mode & 0o077 == 0 and cases[0]["secret"] in day_file.read_text()
    attack.data = attack.root / "first-run"  # a data home the kernel makes: 0700
    assert attack.cli("log", "verify").returncode == 0
    assert attack.data.stat().st_mode & 0o777 == 0o700

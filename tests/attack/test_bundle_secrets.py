"""The bug bundle carries no secret the user's files held.

Reproduced from outside: a workspace file holding common secret formats, read with
``fs.read``, then ``adjutant bundle``: nine of eleven formats came out unredacted
(``aws_secret_access_key = ...``, ``db_password=...``, ``GITHUB_TOKEN=...``, a
``postgres://admin:...@`` URL). The bundle now passes every string through
`adjutant.safety.redaction` (gitleaks' rules and Adjutant's own) and says in
``bundle/redactions.json`` what it hid. The fixture is `tests/fixtures/secrets.jsonl`
(34 formats); `bench/redaction.py` prints the recall on it and on a held-out set.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from .helpers import Attack, plan

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "secrets.jsonl"


def test_no_fixture_secret_leaves_in_the_bundle(attack: Attack) -> None:
    cases = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    assert len(cases) >= 30
    (attack.work / "settings.env").write_text("\n".join(c["text"] for c in cases) + "\n")
    attack.mode("execute-with-confirmation")  # reads run without a question
    attack.script(plan(("fs.read", {"path": "settings.env"})))
    done = attack.cli("run", "show me settings.env", "--json")
    assert json.loads(done.stdout)["status"] == "executed", done.stderr
    assert cases[0]["secret"] in done.stdout  # the user sees their own file, whole
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

"""Redaction recall and false positives: what a bug bundle, and the context bulletin a
remote model receives, hide.

Two sets of secret formats, one line (or PEM block) each with the secret it holds:
``tests/fixtures/secrets.jsonl`` (34 formats, written while the rules were chosen: the
tuning set) and ``bench/redaction_heldout/secrets.jsonl`` (written by someone who never
saw the rules: the held-out set), and ``bench/redaction_heldout2/`` (78 formats, written
by a session that saw no code at all). ``tests/fixtures/config_secrets.jsonl`` (34
everyday configuration formats an outside attack found passing: kubeconfig, Maven,
.pgpass, cookies, signed URLs, passphrases) was written with the rules that catch them:
a second tuning set. Recall is the share of secrets whose value no longer
appears after redaction. False positives are lines of ordinary technical text (hashes,
UUIDs, digests, config keys naming secrets, placeholders) that redaction changed. The
baseline in the same run is the bundle's redactor before gitleaks' rules (three
hand-written patterns).

Run: ``.venv/bin/python bench/redaction.py [--quick] [--misses]``.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from adjutant.safety.redaction import Redactor

ROOT = Path(__file__).resolve().parents[1]
SETS = {"tuning": (ROOT / "tests" / "fixtures" / "secrets.jsonl",
                   ROOT / "tests" / "fixtures" / "ordinary.txt"),
        "config": (ROOT / "tests" / "fixtures" / "config_secrets.jsonl",
                   ROOT / "tests" / "fixtures" / "ordinary.txt"),
        "heldout": (ROOT / "bench" / "redaction_heldout" / "secrets.jsonl",
                    ROOT / "bench" / "redaction_heldout" / "ordinary.txt"),
        "heldout2": (ROOT / "bench" / "redaction_heldout2" / "secrets.jsonl",
                     ROOT / "bench" / "redaction_heldout2" / "ordinary.txt")}

# The bundle's redactor before this one, kept here as the baseline.
_OLD = [
    re.compile(r"(?i)\b(bearer|token|api[_-]?key|secret|password)(\s*[:=]\s*|\s+)([^\s'\"]{6,})"),
    re.compile(r"\b(sk|pk|rk|ghp|gho|ghs|github_pat|xox[bpas]|AKIA)[-_A-Za-z0-9]{12,}\b"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
]


def baseline(text: str) -> str:
    keyed, *bare = _OLD
    text = keyed.sub(lambda m: m.group(1) + m.group(2) + "[REDACTED]", text)
    for pattern in bare:
        text = pattern.sub("[REDACTED]", text)
    return text


def now(text: str) -> str:
    return Redactor().text(text)


def measure(redact: Callable[[str], str], cases: list[dict[str, str]],
            ordinary: list[str]) -> tuple[list[str], list[str], float]:
    start = time.perf_counter()
    missed = [c["kind"] for c in cases if c["secret"] in redact(c["text"])]
    changed = [line for line in ordinary if redact(line) != line]
    return missed, changed, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the tuning set only")
    parser.add_argument("--misses", action="store_true", help="name every miss")
    opts = parser.parse_args()
    now("warm up: the rules load on first use")
    print(f"{'set':8} {'redactor':9} {'recall':>14} {'false positives':>16} {'ms/line':>8}")
    for name, (secrets, plain) in SETS.items():
        if opts.quick and name != "tuning":
            continue
        if not secrets.exists():
            print(f"{name:8} (no {secrets.relative_to(ROOT)})")
            continue
        cases = [json.loads(line) for line in secrets.read_text().splitlines() if line.strip()]
        cases = [c for c in cases if c.get("secret") and c["secret"] in c.get("text", "")]
        ordinary = [line for line in plain.read_text().splitlines() if line.strip()]
        for label, redact in (("before", baseline), ("now", now)):
            missed, changed, took = measure(redact, cases, ordinary)
            hit = len(cases) - len(missed)
            print(f"{name:8} {label:9} {hit:>4}/{len(cases):<3} {hit / len(cases):4.0%} "
                  f"{len(changed):>8}/{len(ordinary):<3} {len(changed) / len(ordinary):4.0%}"
                  f" {1000 * took / (len(cases) + len(ordinary)):8.2f}")
            if opts.misses and label == "now":
                for kind in missed:
                    print(f"    missed: {kind}")
                for line in changed:
                    print(f"    changed: {now(line)[:100]}")


if __name__ == "__main__":
    main()

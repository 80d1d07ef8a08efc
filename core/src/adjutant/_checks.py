"""The built-in environment checks (``adjutant doctor`` runs them with the plugins'),
each with an actionable message."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import CheckResult

if TYPE_CHECKING:
    from pathlib import Path

    from adjutant_hookspecs import Kernel

    from .kernel._kernel import Kernel as CoreKernel  # what reads the kernel's own hook tables

# anyio, the settings, the sandbox, tempfile and shutil (~15 ms each for the last two,
# bench/startup.py) are imported inside the checks: this module is imported whenever a
# kernel loads (the built-in plugin registers the checks), and `adjutant --help` loads one.

__all__ = ["BUILTIN_CHECKS", "safety_chain"]


def ok(message: str) -> CheckResult:
    return CheckResult(status="ok", message=message)


def check_python(kernel: Kernel) -> CheckResult:
    v = sys.version_info
    if v < (3, 11):
        return CheckResult(status="fail", message=f"Python {v.major}.{v.minor} is too old",
                           fix="install Python 3.11 or newer")
    return ok(f"Python {v.major}.{v.minor}.{v.micro} at {sys.executable}")


def check_data_home(kernel: Kernel) -> CheckResult:
    home: Path = kernel.home
    probe = home
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        return CheckResult(status="fail", message=f"data directory {home} is not writable",
                           fix=f"make {probe} writable, or set ADJUTANT_HOME to a writable "
                           "directory")
    if not home.exists():
        return ok(f"data directory {home} (will be created on first use, mode 700)")
    mode = home.stat().st_mode & 0o777
    if mode & 0o077:
        return CheckResult(
            status="warn", message=f"data directory {home} can be read by other users "
            f"(mode {mode:o}): the action log and run artifacts in it hold what your files "
            "and commands said", fix=f"chmod 700 {home}")
    return ok(f"data directory {home} (exists, mode {mode:o})")


def check_profiles(kernel: Kernel) -> CheckResult:
    from .kernel._settings import ProfileError, list_profiles, load_profile

    problems = []
    for name in list_profiles(kernel.home):
        try:
            load_profile(kernel.home, name)
        except ProfileError as exc:
            problems.append(str(exc))
    try:
        active = kernel.profile.name
    except ProfileError as exc:
        problems.append(str(exc))
        active = "?"
    if problems:
        return CheckResult(status="fail", message="\n".join(problems),
                           fix=f"edit the file(s) under {kernel.home / 'profiles'} as shown")
    return ok(f"active profile {active!r}; profiles: {', '.join(list_profiles(kernel.home))}")


def check_plugin_settings(kernel: Kernel) -> CheckResult:
    """Every plugin's settings section, in every saved profile, validated against the
    class the plugin declared; the active profile's values shown (what it sets)."""
    import attrs

    from .kernel._settings import ProfileError, list_profiles, load_profile, plugin_section

    profiles = []
    for name in list_profiles(kernel.home):
        try:
            profiles.append(load_profile(kernel.home, name))
        except ProfileError:
            continue  # the profiles check says why
    try:
        active = kernel.profile
    except ProfileError:
        return CheckResult(status="fail", message="the active profile does not load",
                           fix="see the profiles check")
    problems, shown = [], []
    for plugin, schema in kernel.settings_schemas.items():
        for profile in profiles:
            try:
                plugin_section(profile, plugin, schema)
            except ProfileError as exc:
                problems += [f"profile {exc.source}: {p}" for p in exc.problems]
        try:
            values = attrs.asdict(kernel.plugin_settings(schema))
        except ProfileError:
            continue  # listed above
        given = active.plugins.get(plugin, {})
        set_here = ", ".join(f"{k}={values[k]!r}" for k in given if k in values)
        shown.append(f"{plugin}: {set_here or 'defaults'} ({len(values)} settings)")
    if problems:
        return CheckResult(status="fail", message="\n".join(problems),
                           fix=f"edit the file(s) under {kernel.home / 'profiles'} as shown")
    unread = sorted(set(active.plugins) - set(kernel.settings_schemas))
    if unread:
        return CheckResult(status="warn", message="\n".join(
            [*shown, f"plugins.{', plugins.'.join(unread)}: no loaded plugin declares "
                     "these settings (kept, unread)"]),
            fix="install the plugin, or remove its section from the profile")
    return ok("\n".join(shown) or "no plugin declares settings")


def check_plugins(kernel: Kernel) -> CheckResult:
    failed = [p for p in kernel.plugins if p.status == "failed"]
    if failed:
        lines = [f"{p.name}: {p.error}" for p in failed]
        names = ",".join(p.name for p in failed)
        dists = " ".join(p.distribution for p in failed if p.distribution)
        fix = f"skip them with ADJUTANT_DISABLE_PLUGINS={names}"
        if dists:
            fix = f"reinstall or upgrade ({dists}), or {fix}"
        return CheckResult(status="fail", message="\n".join(lines), fix=fix)
    loaded = sum(p.status == "loaded" for p in kernel.plugins)
    disabled = sum(p.status == "disabled" for p in kernel.plugins)
    return ok(f"{loaded} plugin(s) loaded, {disabled} disabled")


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""


def safety_chain(kernel: CoreKernel) -> list[dict[str, str]]:
    """What judges each step, as loaded: every registered policy and every plugin with
    a ``pre_tool_use`` hook, each with its plugin and what it enforces: a policy's
    ``description``, else the first line of its class's docstring or of its module's;
    for a hook, the first line of the hook's docstring, else of its plugin's."""
    out = []
    for name, policy in kernel.policies.items():
        owner = kernel.policies.owner(name)
        text = getattr(policy, "description", None) or _first_line(type(policy).__doc__) \
            or _first_line(getattr(sys.modules.get(type(policy).__module__), "__doc__", ""))
        out.append({"name": name, "kind": "policy", "plugin": owner,
                    "enforces": text or "(it does not say)"})
    for plugin in kernel.implementers("pre_tool_use"):
        obj = kernel._objects.get(plugin)
        impls = kernel._impls.get(plugin, {}).get("pre_tool_use", [])
        text = next((_first_line(i.function.__doc__) for i in impls
                     if _first_line(i.function.__doc__)), "") \
            or getattr(obj, "description", None) or _first_line(getattr(obj, "__doc__", ""))
        out.append({"name": plugin, "kind": "pre_tool_use", "plugin": plugin,
                    "enforces": text or "(it does not say)"})
    return out


def check_log_store(kernel: Kernel) -> CheckResult:
    logs = [key.split(":", 1)[1] for key in kernel.stores if key.startswith("log:")]
    kvs = [key.split(":", 1)[1] for key in kernel.stores if key.startswith("kv:")]
    if not logs:
        return CheckResult(
            status="fail",
            message="no action log store is installed: `adjutant run`, `chat` and `mcp "
            "serve` refuse to run any step, because nothing may execute without a "
            "durable record",
            fix="install adjutant-lmdb (or another LogStore plugin); if it is installed, "
            "take it out of ADJUTANT_DISABLE_PLUGINS / put it in ADJUTANT_LOAD_PLUGINS")
    if not kvs:
        return CheckResult(
            status="warn",
            message=f"action log: {', '.join(logs)}; no key/value store: the mode, grants "
            "and pinned workspaces are not kept between commands (every start is "
            "propose-only)",
            fix="install adjutant-lmdb (it provides both)")
    from .kernel._stores import StoreChoiceError, choose_store

    chosen = []
    for kind in ("log", "kv"):
        try:
            store = choose_store(kernel.stores, kind, kernel.profile.stores.get(kind))
        except StoreChoiceError as exc:
            return CheckResult(status="fail", message=str(exc),
                               fix="add \"stores\" to the profile (see `adjutant doctor` "
                               "profiles)")
        chosen.append(getattr(store, "name", "?"))
    return ok(f"action log: {chosen[0]}; state: {chosen[1]}")


def check_provider(kernel: Kernel) -> CheckResult:
    from .kernel._settings import ProfileError

    installed = ", ".join(kernel.providers) or "none"
    try:
        wanted = kernel.profile.model.provider
        profile = kernel.profile.name
    except ProfileError as exc:
        return CheckResult(status="fail", message=f"no usable profile: {exc}",
                           fix="fix the profile (see the profiles check)")
    if wanted not in kernel.providers:
        what = "no model provider is installed" if not len(kernel.providers) else \
            f"profile {profile!r} uses provider {wanted!r}, which is not installed"
        return CheckResult(
            status="fail",
            message=f"{what} (installed: {installed}): every request fails before the "
            "model is asked",
            fix="install the provider's plugin (the embedded one is adjutant-llamacpp), "
            "or switch to a preset that uses an installed one (`adjutant presets`)")
    return ok(f"profile {profile!r} uses provider {wanted!r} (installed: {installed})")


def check_policies(kernel: CoreKernel) -> CheckResult:
    chain = safety_chain(kernel)
    if not chain:
        return CheckResult(
            status="warn",
            message="no safety policy is installed: every step asks for your approval, "
            "reads included, and nothing but the tools themselves cages paths, protects "
            "secrets or refuses sudo",
            fix="install adjutant-guard (path cages, secrets, no privilege escalation, "
            "network grants) and adjutant-write-gate")
    lines = [f"{c['name']} ({c['kind']}, plugin {c['plugin']}): {c['enforces']}"
             for c in chain]
    if not any(c["kind"] == "policy" for c in chain):
        return CheckResult(
            status="warn",
            message="\n".join(["no Policy is registered, only pre_tool_use hooks: a step "
                               "they all abstain on asks", *lines]),
            fix="install adjutant-guard for path cages, secrets and privilege checks")
    return ok("\n".join(lines))


def check_sandbox(kernel: Kernel) -> CheckResult:
    """A real sandboxed run, with the exact settings tools get."""
    import tempfile

    import anyio

    from .safety import sandbox

    if (missing := sandbox.available()) is not None:
        return CheckResult(
            status="warn",
            message=f"{missing}: subprocess tools cannot be sandboxed, so execute-auto "
            "will be refused",
            fix="apt-get install bubblewrap (Debian/Ubuntu) or dnf install bubblewrap",
        )
    # pids cgroups a SIGKILLed Adjutant left: removed here (a sandboxed run does too),
    # and named if one cannot be
    left = sandbox.stale_cgroups()
    removed = sandbox.remove_stale_cgroups() if left else []
    if stuck := sorted(set(left) - set(removed)):
        return CheckResult(
            status="warn", message=f"{len(stuck)} pids cgroup(s) left by Adjutant processes "
            f"that were killed could not be removed: {', '.join(stuck)}",
            fix=f"kill what is in them (cat {stuck[0]}/cgroup.procs), then rmdir them")
    cleaned = (f"; removed {len(removed)} pids cgroup(s) left by killed Adjutant "
               "processes" if removed else "")
    with tempfile.TemporaryDirectory(prefix="adjutant-doctor-") as cage:
        try:
            result = anyio.run(lambda: sandbox.run(
                ["sh", "-c", "touch ok && ! touch /usr/adjutant-probe 2>/dev/null"],
                cwd=cage, writable=[cage], timeout=10))
            error = result.stderr.strip() or f"exit status {result.returncode}"
            if result.returncode == 0:
                return ok("bubblewrap sandbox works: the cage is writable, the root "
                          f"read-only{cleaned}")
        except Exception as exc:
            error = str(exc)
    return CheckResult(
        status="fail",
        message=f"bubblewrap cannot create a sandbox: {error}",
        fix="enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 "
        "or the AppArmor bwrap profile), or run where namespaces are allowed",
    )


def _tool(name: str, binary: str, package: str, purpose: str) -> Callable[[Any], CheckResult]:
    def check(kernel: Kernel) -> CheckResult:
        import shutil

        path = shutil.which(binary)
        if path is None:
            return CheckResult(status="warn", message=f"{binary} not found: {purpose}",
                               fix=f"apt-get install {package}")
        return ok(f"{binary} at {path}")

    check.__name__ = f"check_{name}"
    return check


BUILTIN_CHECKS: list[tuple[str, Callable[[Any], CheckResult]]] = [
    ("python", check_python),
    ("data-home", check_data_home),
    ("profiles", check_profiles),
    ("plugins", check_plugins),
    ("plugin-settings", check_plugin_settings),
    ("log-store", check_log_store),
    ("provider", check_provider),
    ("policies", check_policies),
    ("sandbox", check_sandbox),
    ("git", _tool("git", "git", "git", "the git tools and context are unavailable")),
    ("ripgrep", _tool("ripgrep", "rg", "ripgrep", "fast file search is unavailable")),
]

"""The plugin shape: a class gets one instance per kernel, a plugin declares its
settings and reads them validated, another plugin is reached through the kernel, and
the kernel's guarantees are put on implementations before pluggy sees them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from adjutant import Kernel, Profile, ProfileError, hookimpl
from adjutant._checks import check_plugin_settings


@attrs.frozen
class GreeterSettings:
    greeting: str = "hello"
    times: int = attrs.field(default=1, validator=attrs.validators.ge(1))


class Greeter:
    """A plugin as a class: whatever it keeps for its kernel lives on the instance."""

    name = "greeter"

    def __init__(self) -> None:
        self.started_with: Any = None

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(GreeterSettings)

    @hookimpl
    def startup(self, kernel: Any) -> None:
        self.started_with = kernel
        self.settings = kernel.plugin_settings(GreeterSettings)


def kernel_with(*plugins: object, profile: Profile | None = None) -> Kernel:
    return Kernel(plugins=plugins, load_installed=False, env={}, profile=profile or Profile())


@pytest.mark.anyio
async def test_a_class_gets_one_instance_per_kernel_holding_its_state() -> None:
    first, second = kernel_with(Greeter), kernel_with(Greeter)
    async with first, second:
        one, two = first.plugin("greeter"), second.plugin("greeter")
        assert isinstance(one, Greeter) and isinstance(two, Greeter) and one is not two
        assert one.started_with is first and two.started_with is second
        assert first.plugin_name(one) == "greeter"
    assert first.plugin("nothing") is None


@pytest.mark.anyio
async def test_settings_come_from_the_profile_validated_into_the_declared_class() -> None:
    profile = Profile(plugins={"greeter": {"greeting": "hi", "times": 3}})
    kernel = kernel_with(Greeter, profile=profile)
    async with kernel:
        plugin = kernel.plugin("greeter")
        assert isinstance(plugin, Greeter)
        assert plugin.settings == GreeterSettings(greeting="hi", times=3)
        assert kernel.plugin_settings(GreeterSettings) is plugin.settings  # cached
    assert kernel_with(Greeter).load().plugin_settings(GreeterSettings) == GreeterSettings()


@pytest.mark.parametrize(("section", "expected"), [
    ({"times": "3"}, "expected int, got str @ $.plugins.greeter.times"),
    ({"greetings": "hi"}, "unknown field(s) greetings (known: greeting, times) @ "
                          "$.plugins.greeter"),
    ({"times": 0}, "'times' must be >= 1: 0 @ $.plugins.greeter"),
])
def test_a_bad_section_names_the_field_and_the_kernel_refuses_to_start(
        section: dict[str, Any], expected: str) -> None:
    kernel = kernel_with(Greeter, profile=Profile(plugins={"greeter": section}))
    with pytest.raises(ProfileError) as caught:
        kernel.load().plugin_settings(GreeterSettings)
    assert caught.value.problems == [expected]


@pytest.mark.anyio
async def test_a_plugin_that_cannot_read_its_settings_does_not_start() -> None:
    kernel = kernel_with(Greeter, profile=Profile(plugins={"greeter": {"times": "x"}}))
    with pytest.raises(RuntimeError, match=r"(?s)greeter.*\$\.plugins\.greeter\.times"):
        async with kernel:
            pass


def test_settings_must_be_attrs_with_defaults_and_declared_once() -> None:
    @attrs.frozen
    class NoDefault:
        needed: str

    class Bad:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(NoDefault)

    class NotAttrs:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(dict)

    class Twice:
        name = "twice"

        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(GreeterSettings)

    kernel = kernel_with(Greeter, Bad, NotAttrs, Twice).load()
    errors = {p.name: p.error for p in kernel.plugins if p.status == "failed"}
    assert "every field needs a default" in errors["Bad"] and "needed" in errors["Bad"]
    assert "must be an attrs class" in errors["NotAttrs"]
    assert "already declared by another plugin" in errors["twice"]
    with pytest.raises(LookupError, match="NoDefault"):
        kernel.plugin_settings(NoDefault)


def test_older_profiles_speech_and_listen_keys_become_the_plugins_sections(
        tmp_path: Path) -> None:
    from adjutant import load_profile

    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "old.json").write_text(json.dumps({
        "auto_speech": False, "speech": {"engine": "espeak-ng"},
        "listen": {"language": "de"}, "plugins": {"tts": {"speed": 1.5}}}))
    profile = load_profile(tmp_path, "old")
    assert profile.plugins == {"tts": {"speed": 1.5, "engine": "espeak-ng",
                                       "auto_speech": False},
                               "stt": {"language": "de"}}
    (tmp_path / "profiles" / "bad.json").write_text(json.dumps({"listen": 3}))
    with pytest.raises(ProfileError, match=r"expected a JSON object, got int @ \$\.listen"):
        load_profile(tmp_path, "bad")


def test_doctor_checks_every_saved_profile_and_shows_what_the_active_one_sets(
        tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "default.json").write_text(json.dumps(
        {"plugins": {"greeter": {"greeting": "hey"}, "gone": {"x": 1}}}))
    kernel = Kernel(plugins=[Greeter], load_installed=False, env={}, home=tmp_path).load()
    result = check_plugin_settings(kernel)
    assert result.status == "warn"
    assert "greeter: greeting='hey' (2 settings)" in result.message
    assert "plugins.gone: no loaded plugin declares" in result.message
    (tmp_path / "profiles" / "other.json").write_text(json.dumps(
        {"plugins": {"greeter": {"times": -1}}}))
    result = check_plugin_settings(kernel)
    assert result.status == "fail"
    assert "profile 'other': 'times' must be >= 1: -1 @ $.plugins.greeter" in result.message


def test_implementations_are_guarded_before_registration_and_never_rewritten() -> None:
    """pluggy holds the kernel's guarded wrapper; the plugin object is untouched and
    pluggy's records are never written to after registration."""
    greeter = Greeter()
    original = Greeter.__dict__["startup"]
    kernel = kernel_with(greeter).load()
    [impl] = [i for i in kernel.pm.hook.startup.get_hookimpls() if i.plugin_name == "greeter"]
    assert impl.plugin is not greeter and impl.function.__wrapped__ == greeter.startup
    assert Greeter.__dict__["startup"] is original and "startup" not in vars(greeter)
    assert kernel.plugin("greeter") is greeter


def test_a_kernel_loads_some_kinds_first_and_the_rest_on_demand() -> None:
    """The command line lists commands from a kernel that registered nothing else; the
    rest registers when a subcommand needs it, and a plugin refused then is unloaded
    with everything it had registered."""
    from adjutant_hookspecs import Command

    calls: list[str] = []

    class Tools:
        name = "tools"

        @hookimpl
        def register_commands(self, register: Any) -> None:
            calls.append("commands")
            register(Command(name="hello", help="hi", run=lambda kernel, args: 0))

        @hookimpl
        def register_tools(self, register: Any) -> None:
            calls.append("tools")
            raise RuntimeError("the tool module is broken")

    kernel = kernel_with(Tools).load(kinds={"commands"})
    assert calls == ["commands"] and "hello" in kernel.commands
    assert kernel.plugin("tools") is not None
    kernel.load(kinds={"stores"})  # a kind it does not implement: still loaded
    assert calls == ["commands"] and kernel.plugin("tools") is not None
    kernel.load()
    assert calls == ["commands", "tools"]
    [info] = [p for p in kernel.plugins if p.name == "tools"]
    assert info.status == "failed" and "the tool module is broken" in (info.error or "")
    assert "hello" not in kernel.commands and kernel.plugin("tools") is None
    with pytest.raises(ValueError, match="unknown registration kinds: tool"):
        kernel.load(kinds={"tool"})


# -- attacks on loading by kind: a command that loads a few kinds never skips a judge --


class LateJudge:
    """A plugin whose policy denies everything, registered only when the kernel runs
    its policies hook: what a partial load would miss."""

    name = "late-judge"

    @hookimpl
    def register_policies(self, register: Any) -> None:
        from adjutant_hookspecs import Verdict

        class DenyAll:
            name = "deny-all"

            async def evaluate(self, request: Any) -> Verdict:
                return Verdict(decision="deny", reason="the late judge says no")

        register(DenyAll())


def test_loading_tools_loads_the_policies_that_judge_them() -> None:
    kernel = kernel_with(LateJudge).load(kinds={"commands"})
    assert "policies" not in kernel.loaded_kinds and not dict(kernel.policies)
    kernel.load(kinds={"tools"})  # an embedder's or a plugin command's partial load
    assert {"tools", "policies"} <= kernel.loaded_kinds
    assert any(name.endswith("deny-all") for name in kernel.policies)


def test_a_hook_replaced_after_registration_does_not_run() -> None:
    """pluggy registers the kernel's guarded copy of each implementation: a plugin
    that swaps its hook method afterwards (to slip in a permissive policy) changes
    nothing the kernel calls."""
    kernel = kernel_with(LateJudge).load(kinds={"commands"})
    judge = kernel.plugin("late-judge")
    assert isinstance(judge, LateJudge)

    def permissive(register: Any) -> None:
        raise AssertionError("the swapped-in hook ran")

    judge.register_policies = permissive  # type: ignore[method-assign]
    LateJudge.register_policies = permissive  # type: ignore[assignment,method-assign]
    try:
        kernel.load(kinds={"policies"})
    finally:
        del LateJudge.register_policies
    assert any(name.endswith("deny-all") for name in kernel.policies)

"""Profiles: strict validation with field paths, data home resolution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adjutant import Kernel, Profile, ProfileError, data_home, load_profile, parse_profile


def problems(data: object) -> list[str]:
    with pytest.raises(ProfileError) as info:
        parse_profile(data)  # type: ignore[arg-type]
    return info.value.problems


def test_defaults_are_fail_closed_friendly() -> None:
    profile = parse_profile({})
    assert profile == Profile()
    assert profile.path_cages == ("{workspace}", "{scratch}")
    assert parse_profile({"tools": []}).tools == ()  # empty allow-list: no tools at all


def test_partial_profile_keeps_other_defaults() -> None:
    p = parse_profile({"name": "fast", "model": {"temperature": 0, "stop": ["\n\n"]},
                       "context_providers": {"git": False}, "verbosity": "quiet"})
    assert (p.model.temperature, p.model.stop, p.model.provider) == (0.0, ("\n\n",), "llama-cpp")
    assert p.context_providers == {"git": False}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"model": {"temperature": "hot"}}, "expected float, got str @ $.model.temperature"),
        ({"token_budget": 1.5}, "expected int, got float @ $.token_budget"),
        ({"tool_menu": "yes"}, "expected int, got str @ $.tool_menu"),
        ({"token_budget": True}, "expected int, got bool @ $.token_budget"),
        ({"tools": "files.*"}, "expected a list, got str @ $.tools"),
        ({"tools": ["ok", 3]}, "expected str, got int @ $.tools[1]"),
        ({"context_providers": {"git": "on"}},
         "expected bool, got str @ $.context_providers['git']"),
        ({"verbosity": "loud"}, "loud not in literal"),
        ({"tokens_budget": 10}, "unknown field(s) tokens_budget (known: name, model,"),
        ({"model": {"temperature": 5}}, "'temperature' must be <= 2.0: 5"),
        ({"name": "../etc"}, "'name' must match regex"),
        ([], "expected a JSON object, got list @ $"),
    ],
)
def test_bad_profiles_name_the_field_and_reason(data: object, expected: str) -> None:
    assert any(expected in p for p in problems(data)), problems(data)


def test_every_problem_is_listed_at_once() -> None:
    assert len(problems({"token_budget": "x", "tool_menu": 1.5, "model": {"stop": 1}})) == 3


def test_profiles_load_from_the_data_home(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "work.json").write_text(json.dumps({"verbosity": "quiet"}))
    (tmp_path / "profiles" / "broken.json").write_text('{"verbosity": "qui')
    assert load_profile(tmp_path, "work") == Profile(name="work", verbosity="quiet")
    assert load_profile(tmp_path) == Profile()  # built-in default when no file
    with pytest.raises(ProfileError, match="not valid JSON"):
        load_profile(tmp_path, "broken")
    with pytest.raises(ProfileError, match=r"no such profile \(known: broken, default, work\)"):
        load_profile(tmp_path, "nope")
    kernel = Kernel(load_installed=False, env={"ADJUTANT_HOME": str(tmp_path),
                                               "ADJUTANT_PROFILE": "work"})
    assert kernel.profile.verbosity == "quiet"
    kernel.profile = Profile(name="switched")  # presets switch without a restart
    assert kernel.profile.name == "switched"


def test_data_home_resolution(tmp_path: Path) -> None:
    assert data_home({"ADJUTANT_HOME": str(tmp_path)}) == tmp_path
    assert data_home({"XDG_DATA_HOME": "/xdg"}) == Path("/xdg/adjutant")
    assert data_home({"XDG_DATA_HOME": "relative"}) == Path.home() / ".local/share/adjutant"
    assert data_home({}) == Path.home() / ".local/share/adjutant"

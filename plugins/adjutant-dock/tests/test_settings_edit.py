"""Settings that edit: each change checked by the profile loader (and the plugin's
own declared schema) with its errors, written to the profile file atomically, logged,
in force for the next request, and refused without the token or from another origin;
the folder picker offers only what the user may grant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from dockkit import start_dock

from adjutant_hookspecs import hookimpl

pytestmark = pytest.mark.anyio


@attrs.define
class ChimeSettings:
    """A plugin's declared settings, as adjutant-tts declares its own."""

    auto_speech: bool = True
    volume: float = attrs.field(default=0.5, validator=attrs.validators.le(1.0))
    style: str = "plain"


class Chime:
    name = "chime"

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(ChimeSettings)


async def test_a_change_is_checked_written_logged_and_in_force(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "profiles").mkdir(parents=True)
    path = home / "profiles" / "default.json"
    path.write_text(json.dumps({"verbosity": "quiet"}))
    async with start_dock(home=home, plugins=(Chime(),),
                          env={"HOME": str(tmp_path / "me")}) as dock:
        form = (await dock.client.get("/api/settings/form")).json()
        assert form["file"] == str(path) and form["temperature"] == 0.0
        [chime] = [f for f in form["plugins"].values()
                   if {x["name"] for x in f["fields"]} == {"auto_speech", "volume", "style"}]
        assert {f["name"]: f["kind"] for f in chime["fields"]} == {
            "auto_speech": "bool", "volume": "float", "style": "text"}
        plugin = next(n for n, f in form["plugins"].items() if f is chime)

        bad = await dock.client.post("/api/settings/edit", json={"temperature": 7})
        assert bad.status_code == 422
        assert bad.json()["problems"] == ["'temperature' must be <= 2.0: 7.0 @ $.model"]
        bad = await dock.client.post("/api/settings/edit",
                                     json={"plugins": {plugin: {"volume": 3}}})
        assert bad.status_code == 422, bad.text
        [problem] = bad.json()["problems"]
        assert "volume" in problem and f"$.plugins.{plugin}" in problem, problem
        for wide in ("/", "/etc", str(tmp_path / "me"), str(tmp_path)):
            (tmp_path / "me").mkdir(exist_ok=True)
            bad = await dock.client.post("/api/settings/edit",
                                         json={"cages": ["{workspace}", wide]})
            assert bad.status_code == 422 and "$.cages[1]" in bad.json()["problems"][0], wide
        assert json.loads(path.read_text()) == {"verbosity": "quiet"}  # nothing written

        done = await dock.client.post("/api/settings/edit", json={"temperature": 0.7})
        assert done.status_code == 200, done.text
        assert json.loads(path.read_text()) == {"verbosity": "quiet", "model": {
            "temperature": 0.7}, "name": "default"}  # the rest kept
        assert dock.harness.kernel.profile.model.temperature == 0.7  # in force
        projects = tmp_path / "me" / "projects"
        projects.mkdir(parents=True)
        assert (await dock.client.post("/api/settings/edit", json={
            "cages": ["{workspace}", str(projects)]})).status_code == 200
        assert (await dock.client.post("/api/settings/edit", json={
            "plugins": {plugin: {"auto_speech": False}}})).status_code == 200
        saved = json.loads(path.read_text())
        assert saved["path_cages"] == ["{workspace}", str(projects)]
        assert saved["plugins"][plugin] == {"auto_speech": False}
        assert dock.harness.kernel.plugin_settings(ChimeSettings).auto_speech is False
        assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp
        records = (await dock.client.get("/api/log?kind=dock_settings")).json()["records"]
        assert [r["change"] for r in records] == [
            {"temperature": 0.7}, {"cages": ["{workspace}", str(projects)]},
            {"plugins": {plugin: {"auto_speech": False}}}]
        assert {r["path"] for r in records} == {str(path)}

        # the folder picker: what may be granted is marked so
        listed = (await dock.client.get("/api/folders", params={
            "path": str(tmp_path / "me")})).json()
        assert listed["grantable"] is False  # the home folder itself
        assert listed["folders"] == [{"name": "projects", "path": str(projects),
                                      "grantable": True}]
        assert (await dock.client.get("/api/folders", params={"x": "1"})).status_code == 400
        assert (await dock.client.get("/api/folders", params={"path": "rel"})
                ).status_code == 400


async def test_an_edit_is_refused_without_the_token_or_from_another_origin() -> None:
    async with start_dock() as dock:
        before = dock.harness.kernel.profile.model.temperature
        anonymous = await dock.client.post("/api/settings/edit", json={"temperature": 0.9},
                                           headers={"Authorization": ""})
        assert anonymous.status_code == 401
        foreign = await dock.client.post("/api/settings/edit", json={"temperature": 0.9},
                                         headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403
        assert dock.harness.kernel.profile.model.temperature == before
        assert (await dock.client.get("/api/log?kind=dock_settings")).json()["records"] == []


async def test_the_model_preset_is_chosen_among_installed_providers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "profiles").mkdir(parents=True)
    path = home / "profiles" / "default.json"
    path.write_text(json.dumps({"model": {"provider": "scripted", "model": "script",
                                          "temperature": 0.3}}))
    async with start_dock(home=home, env={"HOME": str(tmp_path / "me")}) as dock:
        form = (await dock.client.get("/api/settings/form")).json()
        names = [p["name"] for p in form["providers"]]
        assert form["provider"] in names and form["model_name"]
        assert all(isinstance(p["remote"], bool) for p in form["providers"])
        assert {p["name"]: p["remote"] for p in form["providers"]}["scripted"] is False
        for change, where in (({"provider": "nowhere", "model": "x"}, "$.model.provider"),
                              ({"provider": names[0], "model": "  "}, "$.model"),
                              ({"provider": names[0]}, "$.model"),
                              ("scripted:script", "$.model")):
            bad = await dock.client.post("/api/settings/edit", json={"model": change})
            assert bad.status_code == 422, bad.text
            assert bad.json()["problems"][0].endswith(where), bad.json()
        assert json.loads(path.read_text())["model"]["model"] == "script"  # nothing written
        done = await dock.client.post("/api/settings/edit", json={
            "model": {"provider": names[0], "model": "another-model"}})
        assert done.status_code == 200, done.text
        saved = json.loads(path.read_text())["model"]
        assert saved == {"provider": names[0], "model": "another-model", "temperature": 0.3}
        assert dock.harness.kernel.profile.model.model == "another-model"  # in force
        [record] = (await dock.client.get("/api/log?kind=dock_settings")).json()["records"]
        assert record["change"] == {"model": {"provider": names[0], "model": "another-model"}}

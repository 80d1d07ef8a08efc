"""The sample files under samples/ are valid: they decode to their contracts."""

from __future__ import annotations

import shutil
from pathlib import Path

from adjutant import Profile
from adjutant.kernel._settings import load_profile
from adjutant_hookspecs import ContextBulletin, decode

SAMPLES = Path(__file__).parents[1] / "samples"


def test_context_bulletin_sample_decodes() -> None:
    bulletin = decode((SAMPLES / "context_bulletin.json").read_bytes(), ContextBulletin)
    assert bulletin.git is not None and bulletin.git.dirty
    assert bulletin.recent_shell and bulletin.logs and bulletin.project


def test_default_profile_sample_is_the_default(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    shutil.copy(SAMPLES / "profiles" / "default.json", tmp_path / "profiles" / "full.json")
    loaded = load_profile(tmp_path, "full")
    assert loaded.model.context_size == 4096
    default = Profile()
    assert (loaded.model.provider, loaded.model.model, loaded.tools, loaded.path_cages,
            loaded.system_prompt, loaded.tool_menu) == (
        default.model.provider, default.model.model, default.tools, default.path_cages,
        default.system_prompt, default.tool_menu)

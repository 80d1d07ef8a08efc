"""Cross-package test helpers: real installed-looking plugins on a temporary path."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

MakeDist = Callable[..., Path]
#: The golden set's workspace is a fixture project (with its own tests), not ours.
collect_ignore_glob = ["golden/workspace/*"]


@pytest.fixture
def site_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on sys.path that importlib.metadata scans like site-packages."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


@pytest.fixture
def make_dist(site_dir: Path) -> MakeDist:
    """Write a distribution (dist-info + module) that registers an ``adjutant``
    entry point, exactly as pip would lay it out."""

    def make(dist: str, module: str, source: str, entry: str | None = None,
             version: str = "1.0") -> Path:
        (site_dir / f"{module}.py").write_text(textwrap.dedent(source))
        info = site_dir / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
        )
        (info / "entry_points.txt").write_text(f"[adjutant]\n{entry or module} = {module}\n")
        return site_dir

    return make

"""``project``: real build files in the cwd."""

from pathlib import Path

import pytest

from adjutant_context import ProjectProvider

pytestmark = pytest.mark.anyio


async def project(cwd: Path) -> object:
    return (await ProjectProvider().gather(str(cwd))).get("project")


async def test_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "1.2.3"\n')
    assert await project(tmp_path) == {"name": "demo", "version": "1.2.3",
                                       "language": "python", "files": ["pyproject.toml"]}


async def test_poetry_and_dynamic_version(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.poetry]\nname = "old"\nversion = "0.1"\n')
    assert await project(tmp_path) == {"name": "old", "version": "0.1", "language": "python",
                                       "files": ["pyproject.toml"]}
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "d"\ndynamic = ["version"]\n')
    assert await project(tmp_path) == {"name": "d", "version": None, "language": "python",
                                       "files": ["pyproject.toml"]}


async def test_package_json(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "@org/web", "version": "2.0.0"}')
    assert await project(tmp_path) == {"name": "@org/web", "version": "2.0.0",
                                       "language": "javascript", "files": ["package.json"]}


async def test_cargo(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "tool"\nversion = "0.3.0"\n')
    assert await project(tmp_path) == {"name": "tool", "version": "0.3.0", "language": "rust",
                                       "files": ["Cargo.toml"]}


async def test_go_mod(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/svc\n\ngo 1.22\n")
    assert await project(tmp_path) == {"name": "example.com/svc", "version": None,
                                       "language": "go", "files": ["go.mod"]}


async def test_several_build_files_the_first_that_names_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    (tmp_path / "package.json").write_text('{"name": "front", "version": "1.0.0"}')
    (tmp_path / "go.mod").write_text("module x\n")
    assert await project(tmp_path) == {
        "name": "front", "version": "1.0.0", "language": "javascript",
        "files": ["pyproject.toml", "package.json", "go.mod"]}


async def test_broken_build_files_are_listed_without_metadata(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\nname=")
    (tmp_path / "package.json").write_text("[1, 2]")
    assert await project(tmp_path) == {"name": None, "version": None, "language": "python",
                                       "files": ["pyproject.toml", "package.json"]}


async def test_nothing_without_build_files(tmp_path: Path) -> None:
    assert await ProjectProvider().gather(str(tmp_path)) == {}

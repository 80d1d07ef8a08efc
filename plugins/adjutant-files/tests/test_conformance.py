"""The standard tool checks, one class per tool, in a cage holding the examples' files."""

from pathlib import Path
from typing import Any

import pytest

import adjutant_files
from adjutant.testing.conformance import ToolConformance
from adjutant_hookspecs import ToolContext

from .helpers import make_cage


class _Caged(ToolConformance):
    cls: Any

    @pytest.fixture
    def tool(self) -> Any:
        return self.cls()

    @pytest.fixture
    def ctx(self, tmp_path: Path) -> ToolContext:
        return make_cage(tmp_path)

    @pytest.mark.anyio
    async def test_examples_preview_without_refusal(self, tool: Any, ctx: ToolContext) -> None:
        from adjutant_hookspecs import ToolCall

        for args in tool.declaration.examples:
            result = await tool.dry_run(ToolCall(tool=tool.declaration.name, args=args), ctx)
            assert result.status == "dry_run", result.stderr

    def test_schema_is_documented(self, tool: Any) -> None:
        schema = tool.declaration.args_schema
        assert all("description" in p for p in schema["properties"].values())
        assert len(tool.declaration.examples) >= 2
        assert len(schema["x-adjutant-requests"]) >= 2


class TestFsRead(_Caged):
    cls = adjutant_files.FsRead


class TestFsWrite(_Caged):
    cls = adjutant_files.FsWrite


class TestFsAppend(_Caged):
    cls = adjutant_files.FsAppend


class TestFsDiff(_Caged):
    cls = adjutant_files.FsDiff


class TestEditorPatch(_Caged):
    cls = adjutant_files.EditorPatch


class TestSearchGrep(_Caged):
    cls = adjutant_files.SearchGrep


class TestCompressZip(_Caged):
    cls = adjutant_files.CompressZip

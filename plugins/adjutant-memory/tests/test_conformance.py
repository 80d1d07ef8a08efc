"""The standard tool and context-provider checks, against the plugin's own objects on a
kernel of their own (working memory holding one entry)."""

from pathlib import Path

import pytest

from adjutant import Kernel
from adjutant.testing.conformance import ContextProviderConformance, ToolConformance
from adjutant_memory import MemoryPlugin, MemoryService, MemorySettings
from adjutant_memory._context import MemoryContext
from adjutant_memory._tool import NoteTool, RememberTool


@pytest.fixture
def plugin(tmp_path: Path) -> MemoryPlugin:
    kernel = Kernel(plugins=[], load_installed=False, env={}, home=tmp_path / "home")
    plugin = MemoryPlugin()
    plugin.service = MemoryService(kernel, MemorySettings())
    plugin.service.working.add("I prefer pytest -q", by="user")
    return plugin


class TestRemember(ToolConformance):
    @pytest.fixture
    def tool(self, plugin: MemoryPlugin) -> RememberTool:
        return RememberTool(plugin)


class TestNote(ToolConformance):
    @pytest.fixture
    def tool(self, plugin: MemoryPlugin) -> NoteTool:
        return NoteTool(plugin)


class TestContext(ContextProviderConformance):
    @pytest.fixture
    def context_provider(self, plugin: MemoryPlugin) -> MemoryContext:
        return MemoryContext(plugin)

"""The standard tool checks, run against this plugin's tool (add one class per tool)."""

import pytest

from adjutant.testing.conformance import ToolConformance
from adjutant_template import Echo


class TestEcho(ToolConformance):
    @pytest.fixture
    def tool(self) -> Echo:
        return Echo()

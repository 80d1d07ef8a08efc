"""The planner (`adjutant.operator.planner`), under its public name."""

from .operator.planner import *  # noqa: F403
from .operator.planner import __all__ as __all__

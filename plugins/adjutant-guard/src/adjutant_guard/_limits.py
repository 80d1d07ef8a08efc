"""Defaults shared by the facade and the rules (a module with no imports, so that
importing the plugin stays cheap)."""

__all__ = ["DEFAULT_MAX_STEPS"]

#: Tool calls one run may make before the guard refuses the next one.
DEFAULT_MAX_STEPS = 25

"""The safety rooms: the protected-path rules and cages (`protection`), the OS sandbox
for subprocesses (`sandbox` and its bind `_layout`), time-boxed cage grants (`_cages`),
owner-only secrets, reading what someone named without blocking on it (`regular`),
and what may reach a terminal (`terminal`).

Nothing is imported here, so that loading one part stays cheap.
"""

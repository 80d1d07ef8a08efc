"""The kernel's rooms: the `Kernel` itself, hook dispatch, plugin loading, the
registries, the event bus, settings and profiles, paths, stores and errors.

Import names from ``adjutant`` (the public face); these modules are its parts. Nothing
is imported here, so that loading one part stays cheap.
"""

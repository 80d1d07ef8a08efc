"""Which registered store keeps what: the profile names it, or the choice is plain.

A profile's ``stores`` names the action log (``"log"``) and the key/value store
(``"kv"``) by name. Unnamed, the one store of that kind is used; where there are
several, the one that is durable (a store with ``durable = False``, like the test
harness's in-memory ones, is not). Anything else is ambiguous and refused, naming the
stores, so nothing is ever written to a store the user did not mean.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from adjutant_hookspecs import Registered

__all__ = ["StoreChoiceError", "choose_store"]


class StoreChoiceError(LookupError):
    """The store a profile names is not registered, or the choice is ambiguous."""


def choose_store(stores: Mapping[str, Any] | Registered[Any], kind: Literal["log", "kv"],
                 wanted: str | None = None) -> Any:
    """The ``kind`` store to use (None: none is registered)."""
    named = {key.split(":", 1)[1]: obj for key, obj in stores.items()
             if key.startswith(f"{kind}:")}
    if wanted is not None:
        if wanted not in named:
            raise StoreChoiceError(
                f"the profile's \"stores\" names {kind} store {wanted!r}, which is not "
                f"registered (registered: {', '.join(named) or 'none'})")
        return named[wanted]
    durable = [name for name, obj in named.items() if getattr(obj, "durable", True)]
    candidates = durable or list(named)
    if len(candidates) > 1:
        raise StoreChoiceError(
            f"several {kind} stores are registered ({', '.join(candidates)}): name the one "
            f"to use in the profile, \"stores\": {{\"{kind}\": \"{candidates[0]}\"}}")
    return named[candidates[0]] if candidates else None

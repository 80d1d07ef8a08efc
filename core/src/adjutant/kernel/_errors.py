"""Errors as a user should read them: the causes inside exception groups.

anyio and trio raise what failed inside a task group as an `ExceptionGroup`
("unhandled errors in a TaskGroup (1 sub-exception)"), which says nothing; every
place that shows an error to a person goes through `leaves` or `message`.
"""

from __future__ import annotations

__all__ = ["cancelled_by_user", "leaves", "message"]


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside ``exc``, groups opened all the way down (depth first,
    in order); ``[exc]`` for an ordinary exception. Repeats of the same type and
    message are dropped."""
    out: list[BaseException] = []
    seen: set[tuple[type, str]] = set()

    def walk(error: BaseException) -> None:
        if isinstance(error, BaseExceptionGroup):
            for inner in error.exceptions:
                walk(inner)
            return
        key = (type(error), str(error))
        if key not in seen:
            seen.add(key)
            out.append(error)

    walk(exc)
    return out


def message(exc: BaseException) -> str:
    """One line per real cause, ``; ``-joined: the message, or the type name for an
    exception without one."""
    return "; ".join(str(e) or type(e).__name__ for e in leaves(exc))


def cancelled_by_user(exc: BaseException) -> bool:
    """Whether ``exc`` is, or a group holds, a KeyboardInterrupt."""
    return any(isinstance(e, KeyboardInterrupt) for e in leaves(exc))

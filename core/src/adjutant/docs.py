"""The hook reference, generated from the hook specifications' docstrings.

``python -m adjutant.docs`` prints it; ``--write PATH`` writes it; ``--check PATH``
fails when PATH is stale. `undocumented` lists what a hook's docstring is missing;
a test keeps that list empty, so the reference cannot fall behind the code.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, get_origin

import msgspec

import adjutant_hookspecs as contracts
from adjutant_hookspecs import PROJECT_NAME, AdjutantSpec

__all__ = ["hooks", "main", "render", "undocumented"]

_PROTOCOLS = ("Provider", "Tool", "ContextProvider", "Policy", "KeyValueStore", "LogStore",
              "Frontend", "Command", "Check", "CheckResult", "Verdict", "PolicyRequest",
              "ToolContext", "CompletionRequest", "CompletionChunk")
_CONTRACTS = ("ToolDeclaration", "ToolSafety", "ToolCall", "ExecutionResult", "ContextBulletin",
              "GitState", "Plan", "Response", "Envelope")
_HEADER = ("<!-- Generated from the hook docstrings; do not edit. "
           "Regenerate: python -m adjutant.docs --write docs/hooks.md -->")
_PARAM = re.compile(r":param (\w+):\s*(.*)")
_ADDED = re.compile(r"\.\. versionadded::\s*(.*)")
_RETURN = re.compile(r"\bReturns?\b")
_ROLE = re.compile(r":\w+:`(~?)([\w.]+)`")
_SECTION = re.compile(r"\s*#\s*--\s*(.*?)\s*-*\s*$")  # `# -- safety ----` in the spec class


def hooks(spec: type = AdjutantSpec) -> list[tuple[str, Callable[..., Any]]]:
    """The hooks of ``spec`` in source order: methods carrying pluggy's spec marker."""
    return [(n, f) for n, f in vars(spec).items() if hasattr(f, f"{PROJECT_NAME}_spec")]


class _Doc(msgspec.Struct):
    summary: str = ""
    params: dict[str, str] = msgspec.field(default_factory=dict)
    prose: list[str] = msgspec.field(default_factory=list)  # lines, blank lines kept
    added: str = ""


def _parse(doc: str) -> _Doc:
    """Split a reST-style hook docstring into summary, ``:param:`` entries, prose, version."""
    lines = inspect.cleandoc(doc).splitlines()
    out, param = _Doc(summary=lines[0].strip() if lines else ""), ""
    for line in lines[1:]:
        if param and line.startswith(" ") and line.strip():  # a :param: continuation
            out.params[param] = f"{out.params[param]} {line.strip()}".strip()
            continue
        param = ""
        if m := _PARAM.match(line):
            param = m[1]
            out.params[param] = m[2]
        elif m := _ADDED.match(line):
            out.added = m[1].strip()
        else:
            out.prose.append(line)
    return out


def undocumented(spec: type = AdjutantSpec) -> list[str]:
    """Everything the hook docstrings of ``spec`` fail to say, one problem per entry.

    A hook needs a docstring, a ``:param x:`` for each argument and none for others,
    a return contract (the word "Return"/"Returns" outside the params) and
    ``.. versionadded::``.
    """
    problems: list[str] = []
    for name, fn in hooks(spec):
        if not (fn.__doc__ or "").strip():
            problems.append(f"{name}: no docstring")
            continue
        doc = _parse(fn.__doc__ or "")
        args = [p for p in inspect.signature(fn).parameters if p != "self"]
        problems += [f"{name}: argument {a!r} has no ':param {a}:'"
                     for a in args if a not in doc.params]
        problems += [f"{name}: ':param {p}:' documents no argument"
                     for p in doc.params if p not in args]
        if not _RETURN.search("\n".join([doc.summary, *doc.prose])):
            problems.append(f"{name}: no return contract (a sentence with 'Returns')")
        if not doc.added:
            problems.append(f"{name}: no '.. versionadded::'")
    return problems


# -- rendering ------------------------------------------------------------------------


def _md(text: str) -> str:
    """reST inline markup as Markdown; roles naming a documented type link to it."""
    def role(m: re.Match[str]) -> str:
        name = m[2].rsplit(".", 1)[-1] if m[1] else m[2]
        return f"[`{name}`](#{name.lower()})" if name in _PROTOCOLS + _CONTRACTS else f"`{name}`"
    return _ROLE.sub(role, text.replace("``", "`"))


def _ann(annotation: Any, module: Any = None) -> str:
    """An annotation as written, but ``Literal`` aliases (``Level``) spelled out."""
    if not isinstance(annotation, str):
        return inspect.formatannotation(annotation)
    def alias(m: re.Match[str]) -> str:
        value = getattr(module, m[0], None)
        return inspect.formatannotation(value) if get_origin(value) is Literal else m[0]
    return re.sub(r"\b[A-Za-z_]\w*\b", alias, annotation)


def _signature(fn: Callable[..., Any], name: str) -> str:
    sig, mod = inspect.signature(fn), sys.modules.get(fn.__module__)
    args = [p.name + (f": {_ann(p.annotation, mod)}" if p.annotation is not p.empty else "")
            + (f" = {p.default!r}" if p.default is not p.empty else "")
            for p in sig.parameters.values() if p.name != "self"]
    ret = "" if sig.return_annotation is sig.empty else f" -> {_ann(sig.return_annotation, mod)}"
    prefix = "async " * inspect.iscoroutinefunction(fn)
    return f"{prefix}{name}({', '.join(args)}){ret}"


def _source(cls: type) -> list[str]:
    try:
        return inspect.getsource(cls).splitlines()
    except (OSError, TypeError):  # defined in a REPL or exec(): no section headings
        return []


def _sections(spec: type) -> dict[str, str]:
    """Hook name -> the ``# -- heading --`` comment above it in the spec's source."""
    out, current = {}, "Hooks"
    for line in _source(spec):
        if m := _SECTION.match(line):
            current = m[1].capitalize()
        elif m := re.match(r"\s*def (\w+)", line):
            out[m[1]] = current
    return out


def _field_notes(cls: type) -> dict[str, str]:
    """Field name -> its ``#:`` comment, the attribute-docstring habit of the contracts."""
    out: dict[str, str] = {}
    pending: list[str] = []
    for line in _source(cls):
        if m := re.match(r"\s*#:\s?(.*)", line):
            pending.append(m[1])
            continue
        if pending and (m := re.match(r"\s*(\w+)\s*:", line)):
            out[m[1]] = " ".join(pending)
        pending = []
    return out


def _render_hook(name: str, fn: Callable[..., Any]) -> Iterator[str]:
    doc = _parse(fn.__doc__ or "")
    yield f"### `{name}`\n\n```python\n{_signature(fn, name)}\n```\n"
    yield _md(doc.summary) + "\n"
    if doc.params:
        yield "\n".join(f"- `{p}`: {_md(text)}" for p, text in doc.params.items()) + "\n"
    if prose := "\n".join(doc.prose).strip():
        yield _md(prose) + "\n"
    opts = getattr(fn, f"{PROJECT_NAME}_spec", {})
    if flags := [k for k in ("firstresult", "historic") if opts.get(k)]:
        yield "Hook options: " + ", ".join(f"`{k}=True`" for k in flags) + ".\n"
    if doc.added:
        yield f"*Added in {doc.added}.*\n"


def _default(f: Any) -> str:
    if f.default_factory is not msgspec.NODEFAULT:
        return repr(f.default_factory())
    if isinstance(f.default, msgspec.Struct) and f.default == type(f.default)():
        return f"{type(f.default).__name__}()"  # the full repr would swamp the line
    return repr(f.default)


def _render_type(cls: type) -> Iterator[str]:
    mod, notes = sys.modules.get(cls.__module__), _field_notes(cls)
    hints = {k: v for c in cls.__mro__[::-1] for k, v in vars(c).get("__annotations__", {}).items()}
    yield f"### `{cls.__name__}`\n\n{_md(inspect.getdoc(cls) or '')}\n"
    items: list[str] = []
    if issubclass(cls, msgspec.Struct):
        config = cls.__struct_config__
        if isinstance(config.tag, str):
            yield f'Tagged union member: `{config.tag_field}` is `"{config.tag}"` on the wire.\n'
        for f in msgspec.structs.fields(cls):
            line = f"- `{f.name}`: `{_ann(hints.get(f.name, f.type), mod)}`"
            if f.encode_name != f.name:
                line += f" (wire: `{f.encode_name}`)"
            if not f.required:
                line += f" = `{_default(f)}`"
            items.append(line + (f" — {_md(notes[f.name])}" if f.name in notes else ""))
    elif dataclasses.is_dataclass(cls):  # an in-process value (`Command`)
        for d in dataclasses.fields(cls):
            line = f"- `{d.name}`: `{_ann(hints.get(d.name, d.type), mod)}`"
            if d.default is not dataclasses.MISSING:
                line += f" = `{d.default!r}`"
            items.append(line + (f" — {_md(notes[d.name])}" if d.name in notes else ""))
    else:  # a Protocol: its attributes, then its methods
        items += [f"- `{n}: {_ann(a, mod)}`" for n, a in hints.items()]
        for n, member in vars(cls).items():
            if not n.startswith("_") and inspect.isfunction(member):
                summary = (inspect.getdoc(member) or "").partition("\n")[0]
                items.append(f"- `{_signature(member, n)}`" + (summary and f" — {_md(summary)}"))
    if items:
        yield "\n".join(items) + "\n"


def render(spec: type = AdjutantSpec) -> str:
    """The whole reference as Markdown; the same code always yields the same text."""
    out = [_HEADER + "\n", "# Hook reference\n"]
    if module_doc := inspect.getdoc(sys.modules.get(spec.__module__)):
        out.append(_md(module_doc) + "\n")
    sections, current = _sections(spec), None
    for name, fn in hooks(spec):
        if sections.get(name, "Hooks") != current:
            current = sections.get(name, "Hooks")
            out.append(f"## {current}\n")
        out += _render_hook(name, fn)
    out.append("## Registered objects and value types\n")
    for name in _PROTOCOLS:
        out += _render_type(getattr(contracts, name))
    out.append("## Data contracts\n\nField names are the wire names unless noted.\n")
    for name in _CONTRACTS:
        out += _render_type(getattr(contracts, name))
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m adjutant.docs",
                                     description="Generate the Adjutant hook reference.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", metavar="PATH", type=Path, help="write the reference to PATH")
    group.add_argument("--check", metavar="PATH", type=Path, help="exit 1 if PATH is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.check.read_text(encoding="utf-8") if args.check.is_file() else None
        if current != text:
            print(f"{args.check} is stale; run: python -m adjutant.docs --write {args.check}",
                  file=sys.stderr)
            return 1
    elif args.write:
        args.write.write_text(text, encoding="utf-8", newline="\n")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

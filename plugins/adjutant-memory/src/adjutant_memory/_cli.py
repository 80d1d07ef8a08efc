"""``adjutant memory show|add|edit|forget|index|search|status``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ._service import MemoryService
    from ._working import Entry

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    show = actions.add_parser("show", help="working memory, each entry with its source")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    add = actions.add_parser("add", help="remember something (you say it: no question)")
    add.add_argument("text", help="what to remember")
    add.add_argument("--kind", choices=["preference", "fact", "note"], default="preference")
    add.add_argument("--json", action="store_true")
    edit = actions.add_parser("edit", help="edit working memory in $EDITOR, or --set")
    edit.add_argument("--set", action="append", default=[], metavar="ID=TEXT",
                      help="replace the text of the entry whose id starts with ID")
    edit.add_argument("--json", action="store_true")
    forget = actions.add_parser("forget", help="remove an entry (logged)")
    forget.add_argument("id", help="the entry's id (a unique prefix is enough)")
    forget.add_argument("--json", action="store_true")
    index = actions.add_parser("index", help="index the project's files now")
    index.add_argument("path", nargs="?", default=".", help="the project (default: here)")
    index.add_argument("--retry", action="store_true", help="retry the failed files too")
    index.add_argument("--json", action="store_true")
    watch = actions.add_parser("watch", help="keep the project's index current as files "
                               "change (a stat poll; Ctrl-C stops)")
    watch.add_argument("path", nargs="?", default=".", help="the project (default: here)")
    watch.add_argument("--interval", type=float, default=2.0, help="seconds between looks")
    watch.add_argument("--rounds", type=int, default=None, help=argparse.SUPPRESS)
    search = actions.add_parser("search", help="search the project's index")
    search.add_argument("query")
    search.add_argument("--path", default=".", help="the project (default: here)")
    search.add_argument("-k", "--limit", type=int, default=5)
    search.add_argument("--json", action="store_true")
    status = actions.add_parser("status", help="working memory, the index, the embedder")
    status.add_argument("--path", default=".", help="the project (default: here)")
    status.add_argument("--json", action="store_true")


def _err(message: str) -> int:
    print(f"adjutant memory: error: {message}", file=sys.stderr)
    return 1


def _entry(entry: Entry) -> dict[str, Any]:
    import msgspec

    return msgspec.to_builtins(entry)  # type: ignore[no-any-return]


def _source(entry: Entry) -> str:
    import time

    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.source.at))
    run = f", run {entry.source.run_id}" if entry.source.run_id else ""
    return f"{entry.source.by}, {when}{run}"


def _root(path: str) -> str:
    return os.path.abspath(path)


def _is_dir(path: str) -> bool:
    return os.path.isdir(path)


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


async def run(kernel: Kernel, args: argparse.Namespace) -> int:
    from ._plugin import MemoryPlugin
    from ._working import MemoryFileError

    plugin = next((p for info in kernel.plugins
                   if isinstance(p := kernel.plugin(info.name), MemoryPlugin)), None)
    if plugin is None or plugin.service is None:
        return _err("adjutant-memory is not running in this kernel")
    service = plugin.service
    action = args.action or "show"
    try:
        handler = {"show": _show, "add": _add, "edit": _edit, "forget": _forget,
                   "index": _index, "search": _search, "status": _status,
                   "watch": _watch}[action]
        return await handler(service, args)
    except MemoryFileError as exc:
        return _err(str(exc))


async def _show(service: MemoryService, args: argparse.Namespace) -> int:
    entries = service.working.entries()
    if getattr(args, "json", False):
        _print_json({"entries": [_entry(e) for e in entries], "path": str(service.working.path)})
        return 0
    if not entries:
        print("working memory is empty (adjutant memory add TEXT, or ask the operator to "
              "remember something)")
        return 0
    for e in entries:
        print(f"{e.id}  [{e.kind}] {e.text}\n          source: {_source(e)}")
    return 0


async def _add(service: MemoryService, args: argparse.Namespace) -> int:
    try:
        entry, added = await service.remember(args.text, kind=args.kind, by="user")
    except ValueError as exc:
        return _err(str(exc))
    if args.json:
        _print_json({"entry": _entry(entry), "added": added})
    elif added:
        print(f"remembered as {entry.id}")
    else:
        print(f"already remembered as {entry.id}: kept once, nothing removed")
    return 0


async def _forget(service: MemoryService, args: argparse.Namespace) -> int:
    try:
        entry = await service.forget(args.id, by="user")
    except LookupError as exc:
        return _err(str(exc.args[0]))
    if args.json:
        _print_json({"forgot": _entry(entry)})
    else:
        print(f"forgot {entry.id}: {entry.text}")
    return 0


async def _edit(service: MemoryService, args: argparse.Namespace) -> int:
    import msgspec

    from ._records import MemoryEditedRecord
    from ._working import Entry, check_text

    before = service.working.entries()
    if args.set:
        after = list(before)
        for item in args.set:
            ref, sep, text = item.partition("=")
            if not sep:
                return _err(f"--set takes ID=TEXT, not {item!r}")
            try:
                old = service.working.find(ref)
                text = check_text(text)
            except (LookupError, ValueError) as exc:
                return _err(str(exc.args[0]))
            after[after.index(old)] = msgspec.structs.replace(old, text=text)
    else:
        edited = _in_editor(before)
        if edited is None:
            return _err("no editor: set $EDITOR, or use --set ID=TEXT")
        raw, path = edited
        try:
            after = msgspec.json.decode(raw, type=list[Entry], strict=True)
            for e in after:
                check_text(e.text)
        except (msgspec.ValidationError, msgspec.DecodeError, ValueError) as exc:
            return _err(f"the edit is not valid working memory ({exc}); nothing was changed "
                        f"and your edit is kept in {path}")
        os.unlink(path)
    old_ids = {e.id: e for e in before}
    new_ids = {e.id: e for e in after}
    added = [i for i in new_ids if i not in old_ids]
    removed = [i for i in old_ids if i not in new_ids]
    changed = [i for i in new_ids if i in old_ids and new_ids[i] != old_ids[i]]
    if not (added or removed or changed):
        print("nothing changed")
        return 0
    service.working.replace_all(after)
    await service.record(MemoryEditedRecord(added=added, changed=changed, removed=removed,
                                            by="user"))
    if args.json:
        _print_json({"added": added, "changed": changed, "removed": removed})
    else:
        print(f"working memory edited: {len(added)} added, {len(changed)} changed, "
              f"{len(removed)} removed (logged)")
    return 0


def _in_editor(entries: list[Entry]) -> tuple[bytes, str] | None:
    """The entries as JSON in a temporary file opened in $VISUAL/$EDITOR; what the
    user saved, and the file (kept if the edit is refused)."""
    import shlex
    import subprocess
    import tempfile

    import msgspec

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        return None
    fd, path = tempfile.mkstemp(prefix="adjutant-memory-", suffix=".json")
    with os.fdopen(fd, "wb") as handle:
        handle.write(msgspec.json.format(msgspec.json.encode(entries), indent=2) + b"\n")
    subprocess.run([*shlex.split(editor), path], check=False)
    with open(path, "rb") as handle:
        return handle.read(), path


async def _watch(service: MemoryService, args: argparse.Namespace) -> int:
    root = _root(args.path)
    try:
        service.index(root)
    except (NotADirectoryError, OSError) as exc:
        return _err(str(exc))
    if not args.interval > 0:
        return _err("--interval must be more than 0 seconds")

    async def changed(scan: Any, ingest: Any) -> None:
        print(f"{scan.queued} changed, {scan.removed} removed: {ingest.done} files indexed "
              f"({ingest.chunks} chunks, {ingest.vectors} vectors)", flush=True)

    print(f"watching {service.index(root).root} every {args.interval:g} s (Ctrl-C stops)",
          flush=True)
    await service.watch(root, interval_s=args.interval, rounds=args.rounds,
                        on_change=changed)
    return 0


async def _index(service: MemoryService, args: argparse.Namespace) -> int:
    root = _root(args.path)
    try:
        index = service.index(root)
    except (NotADirectoryError, OSError) as exc:
        return _err(str(exc))
    if args.retry:
        index.retry_failed()
    report = await service.refresh(root, force=True)
    scan = service.last_scan
    assert scan is not None  # forced
    counts = index.counts()
    if args.json:
        _print_json({"root": index.root, "queued": scan.queued, "removed": scan.removed,
                     "refused": [{"path": p, "reason": r} for p, r in scan.refused],
                     "skipped": [{"path": p, "reason": r} for p, r in scan.skipped],
                     "batches": report.batches, "done": report.done,
                     "failed": report.failed, "chunks": report.chunks,
                     "vectors": report.vectors, "counts": counts,
                     "errors": index.errors(), "vector_error": service.vector_error})
        return 0
    if service.vector_error:
        print(f"  vectors not made: {service.vector_error}", file=sys.stderr)
    print(f"{index.root}: {report.done} files indexed in {report.batches} batches "
          f"({report.chunks} chunks, {report.vectors} vectors); {counts['done']} files, "
          f"{counts['chunks']} chunks in the index")
    for path, reason in scan.refused:
        print(f"  not indexed (deny rules): {path}: {reason}")
    for path, error in index.errors().items():
        print(f"  failed: {path}: {error}")
    return 0


async def _search(service: MemoryService, args: argparse.Namespace) -> int:
    from ._assemble import NOTHING_FOUND

    root = _root(args.path)
    await service.refresh(root)
    hits = await service.search(root, args.query, max(1, min(args.limit, 50)))
    if args.json:
        _print_json({"hits": [{"path": h.path, "start": h.start, "end": h.end,
                               "score": h.score, "bm25": h.bm25, "cosine": h.cosine,
                               "coverage": h.coverage, "text": h.text} for h in hits],
                     "answer": None if hits else NOTHING_FOUND})
        return 0
    if not hits:
        print(NOTHING_FOUND)
        return 0
    for h in hits:
        print(f"{h.path}:{h.start}-{h.end}  (bm25 {h.bm25:.2f}"
              + (f", cosine {h.cosine:.2f}" if h.cosine is not None else "") + ")")
    return 0


async def _status(service: MemoryService, args: argparse.Namespace) -> int:
    root = _root(args.path)
    entries = service.working.entries()
    embedder = service.embedder()
    problem = service.embedder_problem
    index = service.index(root) if _is_dir(root) else None
    counts = index.counts() if index is not None else {}
    model = index.vector_model() if index is not None else None
    retrieval = "hybrid" if embedder is not None else "lexical only"
    if args.json:
        _print_json({"entries": len(entries), "retrieval": retrieval,
                     "embedder": None if embedder is None else {
                         "name": embedder.name, "model_id": embedder.model_id,
                         "dimension": embedder.dimension},
                     "embedder_problem": problem, "root": root, "index": counts,
                     "vector_model": None if model is None else
                     {"model_id": model[0], "dimension": model[1]}})
        return 0
    print(f"working memory: {len(entries)} entries ({service.working.path})")
    if embedder is not None:
        print(f"retrieval: hybrid (lexical + {embedder.name}: {embedder.model_id}, "
              f"{embedder.dimension} dimensions)")
    else:
        print(f"retrieval: lexical only ({problem})")
    if counts:
        states = ", ".join(f"{counts[s]} {s}" for s in ("done", "pending", "paused",
                                                         "processing", "failed"))
        print(f"index of {root}: {states}; {counts['chunks']} chunks, "
              f"{counts['vectors']} vectors")
    return 0

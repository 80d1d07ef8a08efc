"""The bind layout: what a sandboxed command sees of the files that protect the user.

A writable cage is bound read-write, so without more everything in it would be
writable: git's hooks and config, ``.envrc``, MCP configs, and, with the workspace at
the home, ``~/.bashrc``, ``~/.ssh`` and Adjutant's own data home. `sandbox_layout`
derives from the deny rules (`adjutant.safety.protection`) the mounts that follow the cage
binds:

- **hidden**, for every sandboxed command, writable cage or not: the secrets at fixed
  places (``reads=True`` rules: ``~/.ssh``, ``~/.aws``, ``~/.gnupg``..., Adjutant's
  data home and its config, state and cache directories). A directory gets an empty
  read-only tmpfs, a file ``/dev/null`` (it reads empty; a write to it goes nowhere,
  the file underneath is untouched). So an approved command can neither read a key
  nor run ``adjutant`` against the real data home (raise its own mode, grant itself a
  cage, touch the log or its checkpoints).
- **read-only**, inside a writable cage: every other protected path there, the fixed
  ones (``~/.bashrc``, ``~/.config/autostart``...) and the ones protected at any depth
  (``.envrc``, ``.mcp.json``, ``.vscode/mcp.json``, key files, ``.env``), which a
  bounded breadth-first walk of the cage finds (`WALK_BUDGET` entries, huge trees
  such as ``node_modules`` skipped); hard links to protected files too.
- **git directories** (``**/.git/**``): git must still write objects, refs and the
  index (``git.commit`` runs in the sandbox), so only what makes git run a program or
  look elsewhere is read-only: `GIT_CODE_PATHS`, in each git directory, linked
  worktree and submodule, and the hooks directory its ``core.hooksPath`` names
  (``.husky``) when that exists in a writable cage.
- **pinned**: each directory between a cage root and one of those mounts is bound
  onto itself. A mount point cannot be renamed or removed (EBUSY), so ``mv .git x;
  mkdir .git`` cannot replace a protected directory with a fresh one.

A path that does not exist yet cannot be bound over without a mount point, and
bubblewrap makes a missing one on the host. Two mechanisms, chosen per place:

- **sealed directory** (fixed places under the home and the data home, e.g.
  ``~/.config/autostart``, ``~/.ssh`` before its first key): the nearest existing
  directory is bound read-only and each of its existing entries bound back writable.
  Nothing can be created, removed or renamed directly in it; everything below stays
  as writable as the cage. Nothing is created on the host, so nothing can be left
  behind: an empty ``~/.bash_profile`` left by a kill would shadow ``~/.profile`` at
  every later login. The cost: with the workspace at the home, a sandboxed command
  cannot add an entry directly to ``~`` (or ``~/.config``).
- **placeholder** (inside a git directory, which cannot be sealed: git creates its
  lock files there): an empty ``hooks/`` or ``info/``, an empty ``config`` or
  ``objects/info/alternates``, and a ``commondir`` holding ``.`` (git reads it as
  "this directory": the same repository), made before the run, bound read-only and
  removed afterwards if still exactly what was made and no other run of this
  process uses it. Each means what its absence meant, so one left by a kill is
  harmless.

Not covered: a name protected at any depth that does not exist yet (a new
``.envrc`` or ``.mcp.json``; a placeholder in every directory is impossible, one at
the cage root would show in ``git status`` and be committed by ``git add -A``; direnv
and the MCP clients ask before trusting a new one), a repository the command creates
itself, and whatever lies beyond `WALK_BUDGET` or in a skipped tree.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .protection import Glob
from .regular import read_regular

if TYPE_CHECKING:
    from .protection import Protection, Shield

__all__ = ["GIT_CODE_PATHS", "WALK_BUDGET", "Layout", "sandbox_layout"]

#: What in a git directory makes git run a program or read another directory's.
GIT_CODE_PATHS = ("config", "config.worktree", "commondir", "hooks", "info",
                  "objects/info/alternates")
#: Placeholders for missing ones: a directory (None) or a file with this content.
_GIT_PLACEHOLDERS: dict[str, str | None] = {
    "hooks": None, "info": None, "config": "", "commondir": ".\n",
    "objects/info/alternates": "",
}
#: Directory entries the walk of the cages looks at, per sandboxed call.
WALK_BUDGET = 4000
#: Trees the walk does not enter: big, generated, and not where config is kept.
SKIPPED = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox",
                     ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages",
                     ".cache", ".npm", ".cargo", ".rustup", "target", ".gradle", ".m2"})
#: Seen differently inside the sandbox (its own /proc, /dev, fresh /tmp and /run).
_PSEUDO = ("/proc", "/sys", "/dev")
_TMPFS = ("/tmp", "/run")
_WILD = frozenset("*?[")
#: Entries of a sealed directory bound back writable, at most (the rest stay read-only).
_SEAL_MAX = 4096
#: How deep submodules and worktrees of a git directory are followed.
_GIT_DEPTH = 3

_HIDE, _RO, _SEAL, _PIN = "hide", "ro", "seal", "pin"
_RANK = {_PIN: 1, _SEAL: 2, _RO: 3, _HIDE: 4}

_lock = threading.Lock()
#: Placeholders of this process still in use, by path: a concurrent run must not lose
#: its mount because another removed the placeholder under it.
_in_use: dict[str, int] = {}


@dataclass(frozen=True)
class _Placeholder:
    path: str
    content: str | None
    dev: int
    ino: int


@dataclass
class Layout:
    """The bubblewrap arguments that follow the cage binds, and what to undo after."""

    args: list[str] = field(default_factory=list)
    placeholders: list[_Placeholder] = field(default_factory=list)
    #: Directory entries looked at, and whether the walk stopped at its budget.
    walked: int = 0
    exhausted: bool = False

    def absorb(self, other: Layout) -> None:
        """Take over ``other``'s placeholders (and its figures)."""
        self.args += other.args
        self.placeholders += other.placeholders
        other.placeholders = []
        self.walked += other.walked
        self.exhausted = self.exhausted or other.exhausted

    def close(self) -> None:
        """Remove the placeholders this layout made, if still as made and unused."""
        with _lock:
            for made in reversed(self.placeholders):
                _in_use[made.path] -= 1
                if _in_use[made.path] > 0:
                    continue
                del _in_use[made.path]
                _remove(made)
            self.placeholders.clear()


def _remove(made: _Placeholder) -> None:
    try:
        st = os.lstat(made.path)
        if (st.st_dev, st.st_ino) != (made.dev, made.ino):
            return
        if made.content is None:
            os.rmdir(made.path)  # only if empty
        elif stat.S_ISREG(st.st_mode) and st.st_size == len(made.content.encode()):
            with open(made.path, encoding="utf-8", errors="replace") as handle:
                if handle.read() == made.content:
                    os.unlink(made.path)
    except OSError:
        pass


def sandbox_layout(shield: Shield, writable: Sequence[str], bound: Sequence[str] = (),
                   *, budget: int = WALK_BUDGET) -> Layout:
    """The mounts that keep a sandboxed command off what protects the user.

    :param shield: The deny rules of the call (its home and data home).
    :param writable: The writable cages, as bound (resolved, existing directories).
    :param bound: The other directories bound into the sandbox (cwd, readable ones):
        a secret under the fresh ``/tmp`` is hidden only where something shows it.
    :returns: A `Layout`; its ``args`` go after the cage binds, and `Layout.close`
        must be called once the sandbox is gone.
    """
    mounts = _MountWalk(shield, [os.path.realpath(c) for c in writable],
                        [os.path.realpath(b) for b in (*bound, *writable)], budget)
    try:
        mounts.fixed()
        mounts.walk()
        layout = Layout(mounts.emit(), mounts.made, mounts.walked, mounts.exhausted)
    except BaseException:
        Layout(placeholders=mounts.made).close()
        raise
    return layout


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _depth(path: str) -> int:
    return 0 if path == "/" else path.count("/")


class _MountWalk:
    """Walks the cages once, collecting the mounts that hide what they protect."""

    def __init__(self, shield: Shield, cages: list[str], bound: list[str], budget: int) -> None:
        self.shield = shield
        # The outermost cages only: a cage inside another is walked with it.
        self.cages = [c for c in dict.fromkeys(cages)
                      if not any(o != c and _under(c, o) for o in cages)]
        self.bound = bound
        self.budget = budget
        self.walked = 0
        self.exhausted = False
        self.ops: dict[str, str] = {}
        self.made: list[_Placeholder] = []
        self.gits: set[str] = set()
        self.names = _any_depth(shield.rules)

    # -- deciding ----------------------------------------------------------------------

    def put(self, path: str, kind: str) -> None:
        if _RANK[kind] > _RANK.get(self.ops.get(path, ""), 0):
            self.ops[path] = kind

    def cage_of(self, path: str) -> str | None:
        return next((c for c in self.cages if _under(path, c)), None)

    def touches_cage(self, path: str) -> bool:
        """``path`` is in a writable cage, or holds one."""
        return any(_under(path, c) or _under(c, path) for c in self.cages)

    def visible(self, path: str) -> bool:
        if not any(_under(path, t) for t in _TMPFS):
            return True
        return any(_under(path, b) or _under(b, path) for b in self.bound)

    def fixed(self) -> None:
        """The rules' fixed places: secrets hidden everywhere, the rest read-only in a
        cage; a missing one in a cage seals its nearest existing directory."""
        for rule in self.shield.rules.rules:
            pattern = rule.glob.pattern
            stem = pattern.removesuffix("/**")
            if stem.startswith("/**/") or any(_under(stem, p) for p in _PSEUDO):
                continue  # any depth: the walk's; /proc and /dev: the sandbox's own
            for place in self._places(stem):
                secret = rule.reads
                if not secret and not self.touches_cage(place):
                    continue  # the root is read-only anyway
                self._protect(place, _HIDE if secret else _RO)

    def _places(self, stem: str) -> Iterable[str]:
        """The existing or possible paths a fixed stem names (a wildcard only in the
        last component, as in ``/etc/ssh/ssh_host_*_key``, is listed)."""
        head, _, last = stem.rpartition("/")
        if _WILD.intersection(head):
            return ()
        if not _WILD.intersection(last):
            return (os.path.normpath(stem),)
        glob = Glob(stem)
        try:
            names = os.listdir(head or "/")
        except OSError:
            return ()
        return [p for n in names if glob.match(p := os.path.join(head or "/", n))]

    def _protect(self, place: str, kind: str) -> None:
        """Hide ``place`` or make it read-only, by its resolved name; a link on the way
        there could be replaced, so the directory holding it is sealed."""
        if not self.touches_cage(place):
            # only hidden: a missing one cannot be made (the root is read-only), and a
            # link is followed by the mount as by any reader
            if kind == _HIDE and os.path.lexists(place) and self.visible(place):
                self.put(os.path.realpath(place), kind)
            return
        self._links(place)
        real = os.path.realpath(place)
        if not os.path.lexists(real):
            self._missing(real)
        elif (kind == _HIDE and self.visible(real)) or (kind == _RO and self.touches_cage(real)):
            self.put(real, kind)

    def _links(self, place: str) -> None:
        prefix = ""
        for part in place.strip("/").split("/"):
            prefix += "/" + part
            try:
                if not stat.S_ISLNK(os.lstat(prefix).st_mode):
                    continue
            except OSError:
                return
            self._seal_in_cage(os.path.dirname(prefix))
            return

    def _missing(self, path: str) -> None:
        """Nothing may be created at ``path``: seal its nearest existing directory, if
        that lies in a writable cage."""
        parent = os.path.dirname(path)
        while parent != "/" and not os.path.lexists(parent):
            parent = os.path.dirname(parent)
        self._seal_in_cage(parent)

    def _seal_in_cage(self, directory: str) -> None:
        if self.cage_of(directory) is not None and os.path.isdir(directory) \
                and not os.path.islink(directory):
            self.put(directory, _SEAL)

    def walk(self) -> None:
        """Breadth-first through each cage: names protected at any depth, hard links to
        protected files, git directories. Stops at the budget.

        Per entry only its name and type are looked at (no ``stat``: that would double
        the cost); a hard link is spotted by its inode number, which the directory
        listing carries, against the protected files' (`protected_inodes`)."""
        if not self.cages:
            return
        rules, names = self.shield.rules, self.names
        from .protection import protected_inodes

        twins = {ino for _, ino in protected_inodes(self.shield.homes, self.shield.data_homes)}
        queue: list[str] = []
        for cage in self.cages:
            queue.append(cage)
            if rules.match((cage,), write=True) and not self._git_like(cage):
                self.put(cage, _RO)  # the cage itself is protected (granted by mistake)
        index = 0
        while index < len(queue):
            directory = queue[index]
            index += 1
            try:
                with os.scandir(directory) as listing:
                    entries = list(listing)
            except OSError:
                continue
            if self._is_git_dir(directory, {e.name for e in entries}):
                self.git_dir(directory, 0)
                continue
            if len(entries) > self.budget - self.walked:
                self.exhausted = True
                entries = entries[:self.budget - self.walked]
            self.walked += len(entries)
            for entry in entries:
                try:
                    if names.hit(entry.name) and rules.match((entry.path,), write=True):
                        self._matched(entry, queue)
                    elif entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIPPED and entry.path not in _PSEUDO:
                            queue.append(entry.path)
                    elif entry.inode() in twins and entry.is_file(follow_symlinks=False):
                        self._twin(entry)
                except OSError:
                    continue
            if self.exhausted:
                return

    def _matched(self, entry: os.DirEntry[str], queue: list[str]) -> None:
        if entry.name.casefold() != ".git":
            self._protect(entry.path, _RO)
        elif entry.is_dir(follow_symlinks=False):
            queue.append(entry.path)  # listed, then handled as a git directory
        else:
            self._protect(entry.path, _RO)
            self._gitfile(entry.path)

    def _twin(self, entry: os.DirEntry[str]) -> None:
        st = entry.stat(follow_symlinks=False)
        if st.st_nlink > 1 and self.shield.twin(st) is not None:
            self.put(entry.path, _RO)

    # -- git ---------------------------------------------------------------------------

    @staticmethod
    def _is_git_dir(directory: str, names: set[str]) -> bool:
        return "HEAD" in names and ("objects" in names or "commondir" in names) \
            and ("refs" in names or "commondir" in names)

    def _git_like(self, path: str) -> bool:
        """A git directory, or a path inside one (a git tool's cage is its .git)."""
        try:
            return self._is_git_dir(path, set(os.listdir(path))) or ".git" in path.split("/")
        except OSError:
            return False

    def _gitfile(self, path: str) -> None:
        """A ``.git`` file names the git directory of a worktree or submodule."""
        try:
            line = read_regular(path, 4096).decode("utf-8", "replace").partition("\n")[0].strip()
        except OSError:
            return
        if line.startswith("gitdir:"):
            target = os.path.realpath(os.path.join(os.path.dirname(path),
                                                   line.removeprefix("gitdir:").strip()))
            if self.cage_of(target) is not None and os.path.isdir(target):
                self.git_dir(target, 1)

    def git_dir(self, git: str, depth: int) -> None:
        """Read-only what makes git run code in ``git``; placeholders for what is
        missing; its worktrees and submodules likewise."""
        if git in self.gits or self.cage_of(git) is None:
            return
        self.gits.add(git)
        common = os.path.isdir(os.path.join(git, "objects"))
        for rel in GIT_CODE_PATHS:
            path = os.path.join(git, rel)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                if common and rel in _GIT_PLACEHOLDERS:
                    self._placeholder(path, _GIT_PLACEHOLDERS[rel])
                continue
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                # the link could be replaced and the git directory cannot be sealed
                # without breaking git: the repository becomes read-only instead
                self.put(git, _RO)
                return
            self.put(path, _RO)
        self._hooks_path(git)
        if depth >= _GIT_DEPTH:
            return
        for sub in ("worktrees", "modules"):
            self._git_children(os.path.join(git, sub), depth + 1)

    def _hooks_path(self, git: str) -> None:
        """The hooks directory ``core.hooksPath`` names (husky's ``.husky``), read-only
        like ``hooks`` when it exists in a writable cage: git runs what is there."""
        top = os.path.dirname(git) if os.path.basename(git) == ".git" else None
        for value in _config_values(os.path.join(git, "config"), "core", "hookspath"):
            if value.startswith("~/"):
                value = os.path.join(self.shield.homes[0] if self.shield.homes else "/",
                                     value[2:])
            elif not value.startswith("/"):
                if top is None:
                    continue  # relative to a work tree found elsewhere
                value = os.path.join(top, value)
            place = os.path.normpath(value)
            if self.touches_cage(place) and os.path.lexists(place):
                self._protect(place, _RO)

    def _git_children(self, directory: str, depth: int) -> None:
        try:
            with os.scandir(directory) as listing:
                children = [e.path for e in listing if e.is_dir(follow_symlinks=False)]
        except OSError:
            return
        for child in children[:64]:
            try:
                names = set(os.listdir(child))
            except OSError:
                continue
            if self._is_git_dir(child, names):
                self.git_dir(child, depth)
            elif depth < _GIT_DEPTH:  # a submodule named a/b lives in modules/a/b
                self._git_children(child, depth + 1)

    def _placeholder(self, path: str, content: str | None) -> None:
        with _lock:
            try:
                if content is None:
                    os.mkdir(path, 0o755)
                else:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                                 | os.O_CLOEXEC, 0o644)
                    with os.fdopen(fd, "w", encoding="utf-8") as handle:
                        handle.write(content)
                st = os.lstat(path)
            except FileExistsError:
                # made meanwhile (by a concurrent run of ours, or by the user): protect
                # what is there
                if path in _in_use or os.path.lexists(path):
                    self.put(path, _RO)
                return
            except OSError:
                return  # cannot be made here: then it cannot be made in the sandbox either
            made = _Placeholder(path, content, st.st_dev, st.st_ino)
            _in_use[path] = _in_use.get(path, 0) + 1
            self.made.append(made)
        self.put(path, _RO)

    # -- emitting ----------------------------------------------------------------------

    def emit(self) -> list[str]:
        ops = dict(self.ops)
        # Below a read-only or hidden mount only a hidden secret is bound (a pin there
        # would make writable what the mount above made read-only).
        closed = [p for p, k in ops.items() if k in (_RO, _HIDE)]

        def shut(path: str) -> bool:
            return any(c != path and _under(path, c) for c in closed)

        for path in [p for p, k in ops.items() if k != _HIDE and shut(p)]:
            del ops[path]
        for path, kind in list(ops.items()):
            if (cage := self.cage_of(path)) is None or shut(path):
                continue
            parent = os.path.dirname(path)
            while parent != cage and _under(parent, cage) and parent not in ops:
                ops[parent] = _PIN  # a mount point: not renamable, so not replaceable
                parent = os.path.dirname(parent)
            if kind == _SEAL:
                for child in _children(path):
                    ops.setdefault(child, _PIN)
        args: list[str] = []
        for path in sorted(ops, key=lambda p: (_depth(p), p)):
            kind = ops[path]
            if kind == _HIDE:
                if os.path.isdir(path):
                    args += ["--tmpfs", path, "--remount-ro", path]
                else:
                    args += ["--ro-bind", "/dev/null", path]
            elif kind in (_RO, _SEAL):
                args += ["--ro-bind", path, path]
            elif path not in self.cages:
                args += ["--bind", path, path]
        return args


@dataclass(frozen=True)
class _Names:
    """The last names ``**/`` rules can match (``.envrc``, ``mcp.json``, ``.git``,
    ``.env.*``): the walk tests each entry's name with it, and only a hit with the
    rules (a whole-path regex per rule is far too slow for thousands of entries)."""

    literal: frozenset[str]
    wild: re.Pattern[str] | None

    def hit(self, name: str) -> bool:
        folded = name.casefold()
        return folded in self.literal or (self.wild is not None
                                          and self.wild.fullmatch(folded) is not None)


@functools.lru_cache(maxsize=16)
def _any_depth(rules: Protection) -> _Names:
    from .protection._globs import FLAGS

    literal: set[str] = set()
    wild: set[str] = set()
    for rule in rules.rules:
        pattern = rule.glob.pattern
        if pattern.startswith("/**/"):
            parts = [p for p in pattern.split("/") if p and p != "**"]
            if not parts:
                continue
            if _WILD.intersection(parts[-1]):
                wild.add(Glob("/" + parts[-1]).regex.removeprefix("/"))
            else:
                literal.add(parts[-1].casefold())
    regex = re.compile("|".join(f"(?:{r})" for r in sorted(wild)), FLAGS) if wild else None
    return _Names(frozenset(literal), regex)


_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)\s*(?:"[^"]*")?\s*\]')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*?)\s*$")


def _config_values(path: str, section: str, key: str) -> list[str]:
    """The values of ``section.key`` in one git config file (simple quoting only;
    no includes: a value git would read from an included file is not found)."""
    try:
        text = read_regular(path, 1 << 20).decode("utf-8", "replace")
    except OSError:
        return []
    found: list[str] = []
    current = ""
    for line in text.splitlines():
        if match := _SECTION.match(line):
            current = match.group(1).lower()
            line = line[match.end():]
        if current == section and (entry := _ENTRY.match(line)) \
                and entry.group(1).lower() == key:
            value = entry.group(2).split(" #")[0].split(" ;")[0].strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            if value:
                found.append(value)
    return found


def _children(directory: str) -> list[str]:
    """The entries of a sealed directory bound back writable: files and directories
    (a symbolic link stays as it is, and is followed as always)."""
    out: list[str] = []
    try:
        with os.scandir(directory) as listing:
            for entry in listing:
                if len(out) >= _SEAL_MAX:
                    break
                if entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False):
                    out.append(entry.path)
    except OSError:
        pass
    return out

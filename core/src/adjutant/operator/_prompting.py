"""Asking the model: the completion request of each attempt, the scored first choice,
and the streamed generation (each chunk an AG-UI text event of the run)."""

from __future__ import annotations

import json
import logging
import os
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import anyio
import msgspec

from adjutant_hookspecs.records import ProviderWarningRecord

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ..safety.protection import PromptFiles

from contextlib import aclosing
from typing import Any

from adjutant_hookspecs import (
    ActivitySnapshot,
    CompletionRequest,
    ContextBulletin,
    ContractError,
    Plan,
    ProviderError,
    Response,
    TextMessageContent,
    TextMessageEnd,
    TextMessageStart,
    ToolCall,
    ToolDeclaration,
    to_builtins,
)

from ..providers import capabilities_of
from ._actionlog import ActionLog
from ._bank import Example
from ._claims import claims_done
from ._clauses import the_ask
from ._edits import nothing_to_change, patch_for, unmatched
from ._grammar import MAX_STEPS, reply_grammar
from ._heads import records_text
from ._here import (
    asks_content,
    compared_amiss,
    compared_files,
    content_asked,
    here,
    misfits,
    named_documents,
    names_here,
    shown_path,
)
from ._in_words import wants_words, wants_words_anyway
from ._refs import git_names
from ._replies import closed_answer, closed_plan, parse_reply
from ._run import Run
from ._words import (
    QUOTED,
    RECORDS,
    asks_where_done,
    carried_patch,
    carried_text,
    echoes,
    hinted,
    is_question,
    only_quote,
    spelled,
)
from .planner import BANK_WEIGHT, END, SIMILAR, Planner, workspace_paths

__all__ = ["Prompting"]

_log = logging.getLogger("adjutant.planner")
T = TypeVar("T")
#: How many of the user's earlier successful plans each recaller gives a request.
PAST_PLANS = 3
#: Requests whose memory passages are remembered for their choice (`Prompting.choose`).
RECENT_PROMPTS = 8


#: A request to write a file whole, whatever it held.
_WHOLE = re.compile(r"\b(?:whole|entire|entirely|overwrite|from scratch|completely|only)\b",
                    re.IGNORECASE)
_AT_END = re.compile(r"\b(?:at|to) the (?:bottom|end)\b", re.IGNORECASE)  # an append


#: What an answer in words to an order that claims it was done is replaced by: the
#: truth, and what to do instead.
NOTHING_DONE = ("Nothing was done: I can only answer that in words, and words change "
                "nothing. Say which command to run (\"run ...\") and I will plan it for your "
                "approval.")
_NOTHING_DONE_REPLY = msgspec.json.encode({"type": "response", "text": NOTHING_DONE}).decode()


class Prompting:
    """How one operator asks its model (the profile's preset, read at every request)."""

    def __init__(self, kernel: Kernel, log: ActionLog,
                 files: Callable[[], PromptFiles] | None = None) -> None:
        self.kernel = kernel
        self.log = log
        #: The check for files joining a prompt (`Workspace.prompt_files`): a file an
        #: edit the request states is read through it (`patch_for`); None reads none.
        self.files = files
        #: How a plan's first step is chosen where the provider can score continuations:
        #: "calibrated" (its likelihood against a content-free request's), "scored"
        #: (its likelihood alone) or "free" (the constrained decoding alone).
        self.first_choice = "calibrated"
        #: How much the bank's nearest requests weigh in that choice, and how many of
        #: them the prompt shows as worked examples (the planning benchmark varies both).
        self.bank_weight = BANK_WEIGHT
        self.similar = SIMILAR
        # content-free priors per menu, kept across requests (a cache, no run's state)
        self.priors: dict[Any, list[float]] = {}
        #: Whether memory's passages are left out of the choice and of a tool's reply
        #: (they ground an answer in words only; measured: 130-190 prompt tokens, 3-4 s
        #: of every question's scoring on 2 cores).
        self.passages_for_answers = True
        #: The tools that show one file, one folder, two files side by side, and where
        #: text is (adjutant-files'): a request that only asks to see one thing here, to
        #: compare two files or where the code does something is planned with them
        #: (`_here.shown_path`, `_here.compared_files`, `_words.asks_where_done`).
        self.viewers = {"file": "fs.read", "dir": "fs.list", "two files": "fs.diff",
                        "text": "search.grep", "edit": "editor.patch"}
        # the passages in each recent request's prompt (`choose` takes them out)
        self._passages: OrderedDict[str, str] = OrderedDict()
        self._answered: OrderedDict[str, bool] = OrderedDict()  # prompt: chose words

    def offered_tools(self) -> dict[str, Any]:
        """The tools the profile's ``tools`` globs allow."""
        profile = self.kernel.profile
        return {n: t for n, t in self.kernel.tools.items() if profile.allows(n)}

    def planner(self) -> Planner:
        return Planner({n: t.declaration for n, t in self.offered_tools().items()},
                       bank_weight=self.bank_weight)

    def provider(self, preset: Any = None) -> Any:
        """The provider of ``preset`` (default: the profile's own ``model``)."""
        name = (preset or self.kernel.profile.model).provider
        if name not in self.kernel.providers:
            installed = ", ".join(self.kernel.providers) or "none"
            raise ProviderError(f"no model provider named {name!r} is installed (installed: "
                                f"{installed})", hint="install its plugin (the embedded one "
                                "is adjutant-llamacpp) or choose a preset that uses one")
        return self.kernel.providers[name]

    def request(self, prompt: str, bulletin: ContextBulletin, simplified: bool, error: str,
                cwd: str, provider: Any, preset: Any = None, *, most: int = MAX_STEPS,
                ) -> tuple[CompletionRequest, list[str]]:
        """The completion request for one attempt, and the tools it offers.

        Every allowed tool is offered (a ranking narrows very long lists, and a retry
        offers half as many), the model choosing among them and ``response``; the static
        part of the prompt goes in ``system`` so a provider can keep it evaluated. The
        reply is constrained by a grammar or a JSON schema where the provider takes one,
        with the read tools' paths limited to those that exist or that the request
        names. ``preset``: the one the router chose (default: the profile's ``model``);
        ``most``: the plan's longest (one for a clause of a request)."""
        profile = self.kernel.profile
        preset = preset or profile.model
        planner = self.planner()
        names = planner.offered(prompt, profile.tool_menu)
        if simplified:
            names = planner.menu(prompt, max(1, len(names) // 2))
        context = {"cwd": bulletin.cwd} if simplified else to_builtins(bulletin)
        context.pop("cwd", None)
        memory = context.pop("memory", None)
        retrieved = str(memory.get("text") or "") if isinstance(memory, dict) else ""
        grounded = self.grounded(prompt, cwd)
        pasted = self.patch_for(prompt, cwd) is not None
        most = 1 if pasted and not carried_patch(prompt) else most  # a stated edit: one
        system = planner.system_text(names, system=profile.system_prompt,
                                     schemas=not simplified)
        # the files are not listed in the prompt (measured: a list made the model answer
        # about files in words); the grammar limits the read tools' paths to them
        text = planner.user_text(_planned(prompt, cwd), names, context=context, error=error,
                                 retrieved=retrieved)
        if retrieved:
            self._passages[text] = retrieved
            while len(self._passages) > RECENT_PROMPTS:
                self._passages.popitem(last=False)
        capabilities = capabilities_of(provider)
        grammar = preset.grammar
        if grammar is None and capabilities.grammar:
            grammar = planner.grammar(names, paths=grounded, most=most, pasted=pasted)
        schema = planner.json_schema(names, paths=grounded, most=most, pasted=pasted) \
            if capabilities.json_schema and not grammar else None
        stop = preset.stop if grammar or END in preset.stop else (*preset.stop, END)
        return CompletionRequest(prompt=text, system=system, model=preset.model,
                                 grammar=grammar,
                                 json_schema=schema, stop=stop,
                                 temperature=preset.temperature,
                                 max_tokens=preset.max_tokens,
                                 context_size=preset.context_size), names

    @staticmethod
    def grounded(prompt: str, cwd: str) -> list[str]:
        """The paths the read tools may name: those here and those the request names
        (as they exist here: "readme.md" is README.md)."""
        named = [here(cwd, p) or p for p in named_documents(prompt)]
        return list(dict.fromkeys([*workspace_paths(cwd), *named, "."]))

    def patch_for(self, prompt: str, cwd: str) -> str | None:
        """The patch a step carries as pasted (`_edits.patch_for`), files read through
        `files`."""
        return patch_for(prompt, cwd, self.files)

    @staticmethod
    def existing(prompt: str, cwd: str) -> list[str]:
        """The paths the request names that exist here, as they exist (`here`: a stat
        each, a listing where the case differs; a few at most). The root alone ("what
        would rm -rf / do?") names no file to read."""
        return [real for p in named_documents(prompt)[:20]
                if p.strip("/") and (real := here(cwd, p))]

    async def while_preparing(self, work: Awaitable[T]) -> T:
        """``work`` (the request's context: git through the sandbox, 0.5 s cold) while
        the default preset's model gets ready (`Provider.prepare`: a local model's load,
        0.8 s cold), side by side. A failure to prepare is the request's to report."""
        try:
            provider = self.provider(None)
        except ProviderError:  # no such provider: the request says so
            return await work
        prepare = getattr(provider, "prepare", None)
        if prepare is None:
            return await work

        async def ready() -> None:
            try:
                await prepare(self.kernel.profile.model.model)
            except Exception as exc:
                _log.debug("preparing the model failed (the request will say): %s", exc)

        async with anyio.create_task_group() as group:
            group.start_soon(ready)
            result = await work
        return result

    async def choose(self, request: CompletionRequest, names: list[str], prompt: str,
                     cwd: str, provider: Any, *, exclude: Sequence[str] = (),
                     most: int = MAX_STEPS, retry: bool = False) -> CompletionRequest:
        """The model's own choice of first step (a tool or a response, none of
        ``exclude``), where the provider can score continuations and the reply has a
        planner grammar. A ``retry`` (the simpler prompt after a malformed reply) is not
        chosen again, but an answer in words stays one: an answer cut in its first
        sentence, asked again freely, had been planned as `fs.write`."""
        if retry:
            return msgspec.structs.replace(request, grammar=reply_grammar({})) if (
                self._answered.get(prompt) and request.grammar is not None) else request
        scorer = getattr(provider, "score", None)
        if scorer is None or self.first_choice == "free" or request.grammar is None \
                or self.kernel.profile.model.grammar is not None or len(names) < 2:
            return request
        passages = self._passages.get(request.prompt, "") if self.passages_for_answers else ""
        paths, asked = self.grounded(prompt, cwd), request
        mended = spelled(prompt, names_here(cwd))  # "shwo me the readme"
        shown = shown_path(mended, cwd) or content_asked(mended, cwd)
        if shown and (viewer := self.viewers.get(shown[0])) in names and viewer not in exclude:
            _log.info("shown: %r only asks to see %s: %s", prompt[:80], shown[1], viewer)
            exclude = [n for n in (*names, "response") if n != viewer]
            paths = [shown[1]]
        elif (pair := compared_files(mended, cwd)) and (
                viewer := self.viewers.get("two files")) in names and viewer not in exclude:
            _log.info("compared: %r compares %s with %s: %s", prompt[:80], *pair, viewer)
            exclude = [n for n in (*names, "response") if n != viewer]
            paths = list(pair)
        elif asks_where_done(mended) and (viewer := self.viewers.get("text")) in names \
                and viewer not in exclude:
            _log.info("where done: %r asks where the code does it: %s", prompt[:80], viewer)
            exclude = [n for n in (*names, "response") if n != viewer]
        elif not is_question(prompt) and not carried_patch(prompt) and self.patch_for(
                prompt, cwd) and (viewer := self.viewers.get("edit")) in names \
                and viewer not in exclude:  # "switch the currency in a.json from EUR to
            _log.info("stated edit: %r: %s", prompt[:80], viewer)  # USD" was git.switch
            exclude = [n for n in (*names, "response") if n != viewer]
        request, choice = await self.planner().choose(
            scorer, request, names, self.priors, paths=paths,
            calibrate=self.first_choice == "calibrated",
            asked=spelled(_planned(prompt, cwd), names_here(cwd)),
            existing=self.existing(prompt, cwd), similar=self.similar,
            past=self.past_plans(prompt, names), exclude=exclude,
            most=1 if self.patch_for(prompt, cwd) and not carried_patch(prompt) else most,
            passages=passages, pasted=self.patch_for(prompt, cwd) is not None)
        if unfit := misfits(self.planner().tools, names, prompt, cwd, choice,
                            self.viewers.get("file")):
            _log.info("second look: %r names no file %s takes", prompt[:80], choice)
            return await self.choose(asked, names, prompt, cwd, provider, most=most,
                                     exclude=[*exclude, *unfit])
        self._answered[prompt] = choice == "response"
        while len(self._answered) > RECENT_PROMPTS:
            self._answered.popitem(last=False)
        return request

    async def reply(self, chosen: CompletionRequest, request: CompletionRequest,
                    names: list[str], prompt: str, cwd: str, provider: Any, run: Run,
                    attempt: int, most: int = MAX_STEPS) -> tuple[CompletionRequest, str]:
        """The model's reply to ``chosen`` (``request`` after `choose`), and the request
        that gave it, chosen again once without what a second look finds wanting: an
        answer in words that only `echoed` the request, a first step reading a file
        the request gives no hint of (`unhinted`), one making a new thing under a
        name taken here (`taken_name`), one comparing a path with itself
        (`self_compared`), a patch of a file not here (`patched_new`), or a file here
        written whole to change a few words of it (`overwritten`). An edit stated of a
        file holding nothing it names is answered so, unasked (`nothing_to_change`)."""
        if not is_question(prompt) and (why := nothing_to_change(prompt, cwd, self.files)):
            return chosen, msgspec.json.encode({"type": "response", "text": why}).decode()
        text = closed_plan(await self.generate(chosen, run, attempt, provider),
                           carried_text(prompt) or only_quote(prompt))
        if self.claimed(text, prompt):  # "stash my changes": "Stashed your changes."
            return chosen, _NOTHING_DONE_REPLY
        if chosen is request:  # no choice was made (a retry, a provider that cannot score)
            return chosen, text
        if self.echoed(text, prompt, cwd):
            wanting, why = ["response"], ("an answer that only repeats the request or "
                                          "speaks of a file unread; a tool instead")
            if asks_content(prompt) and (viewer := self.viewers.get("file")) in names:
                wanting = [n for n in (*names, "response") if n != viewer]
                why = "an answer about what a file holds, unread; a read of it instead"
        elif tool := self.unhinted(text, prompt):  # another read, or an answer: never a
            planner = self.planner()               # write in its place
            wanting = [tool, *(n for n in names if planner.writes(n))]
            why = f"{tool} of a file the request gives no hint of; another read or an answer"
        elif taken := self.taken_name(text, cwd):
            wanting, why = [taken[0]], (f"{taken[0]} makes a new {taken[1]!r}, a name that "
                                        "exists here; another choice")
        elif same := self.self_compared(text, prompt, cwd):
            wanting, why = [same[0]], (f"{same[0]} compares {same[1]!r} with itself, or "
                                        "with a file not named; another choice")
        elif made := self.patched_new(text, cwd, prompt):
            wanting, why = [made[0]], (f"{made[0]} of {made[1]!r}, a file not here or not as "
                                       "the diff has it; another choice")
        elif record := self.unasked_record(text, prompt):
            declared = {n: t.declaration for n, t in self.offered_tools().items()}
            wanting = [n for n in names if n in declared and records_text(declared[n])]
            why = f"{record} keeps text the request does not ask to keep; another choice"
        elif whole := self.overwritten(text, prompt, cwd):
            # a tool taking a patch, where one is offered: fs.append, then a shell's sed
            # (its argv malformed) had come next
            declared = {n: t.declaration for n, t in self.offered_tools().items()}
            editors = [n for n in names if n in declared and "patch" in declared[
                n].args_schema.get("properties", {})]
            wanting = [n for n in (*names, "response") if n not in editors] if editors \
                and not _AT_END.search(prompt) else [whole[0]]
            why = (f"{whole[0]} of {whole[1]!r} would lose its other lines to change text "
                   "quoted from it: an edit instead")
        else:
            return chosen, text
        _log.info("second look: %r was answered %r: %s", prompt[:80], text[:120], why)
        run.publish(ActivitySnapshot(message_id=f"{run.run_id}-second-look-{attempt}",
                                     activity_type="second-look", content={"text": why}))
        chosen = await self.choose(request, names, prompt, cwd, provider, exclude=wanting,
                                   most=most)
        again = closed_plan(await self.generate(chosen, run, attempt, provider, part="-again"),
                            carried_text(prompt) or only_quote(prompt))
        return chosen, _NOTHING_DONE_REPLY if self.claimed(again, prompt) else again

    def unhinted(self, text: str, prompt: str) -> str:
        """The tool of ``text``'s first step when it only reads, and a file it must name
        (a required path) is one the request, naming none, gives no hint of ("what's
        the weather in Berlin?" planned as a read of src/util.py); else empty."""
        if named_documents(prompt) or (first := self.first_step(text)) is None:
            return ""
        step, declaration = first
        if declaration is None or getattr(declaration.safety, "level", "write") != "read":
            return ""
        props = declaration.args_schema.get("properties", {})
        paths = [step.args.get(k) for k in declaration.args_schema.get("required", [])
                 if props.get(k, {}).get("x-adjutant-role") == "path"]
        mended = spelled(prompt)  # "show me the setings file" hints at settings.json (h43)
        if paths and all(isinstance(p, str) and not hinted(p, prompt) and not hinted(p, mended)
                         for p in paths):
            return step.tool
        return ""

    def first_step(self, text: str) -> tuple[ToolCall, ToolDeclaration | None] | None:
        """The first step of the plan ``text`` is, with its offered tool's declaration
        (None when no offered tool has its name); None for anything but a plan."""
        try:
            reply = parse_reply(text)
        except ContractError:
            return None
        if not isinstance(reply, Plan) or not reply.steps:
            return None
        step = reply.steps[0]
        return step, getattr(self.offered_tools().get(step.tool), "declaration", None)

    def taken_name(self, text: str, cwd: str) -> tuple[str, str] | None:
        """``(tool, name)`` when ``text``'s first step makes something new under a name
        that a branch or tag here already has (its ``name`` argument "The new
        branch's name"): it cannot be done, and was not meant ("checkout release/1.0"
        planned as `git.branch` release/1.0; "push my work branch" as `git.branch`
        work). None otherwise."""
        if (first := self.first_step(text)) is None:
            return None
        step, declaration = first
        spec = (declaration.args_schema.get("properties", {}).get("name")
                if declaration is not None else None)
        name = step.args.get("name")
        if not isinstance(spec, dict) or not isinstance(name, str) or "new" not in str(
                spec.get("description", "")).lower().split():
            return None
        return (step.tool, name) if name in git_names(cwd) else None

    def self_compared(self, text: str, prompt: str = "", cwd: str = "") -> tuple[str, str] | None:
        """``(tool, path)`` when ``text``'s first step compares amiss (`compared_amiss`)."""
        first = self.first_step(text)
        if first is None or first[1] is None:
            return None
        path = compared_amiss(first[0], first[1], prompt, cwd)
        return (first[0].tool, path) if path else None

    def patched_new(self, text: str, cwd: str, prompt: str = "") -> tuple[str, str] | None:
        """``(tool, path)`` when ``text``'s first step is a patch (a ``patch`` argument)
        of a file that is not here and that ``prompt`` names ("write a CHANGELOG.md
        containing '# Changelog'" planned as a diff from nothing): a new file is
        written, not patched. A file the request does not name is the model's slip
        ("turn debug on in the settings file": a patch of settings.py)."""
        first = self.first_step(text)
        if first is None or first[1] is None or not isinstance(
                patch := first[0].args.get("patch"), str) or first[1].args_schema.get(
                "properties", {}).get("patch", {}).get("type") != "string":
            return None
        if not carried_patch(prompt) and self.patch_for(prompt, cwd) is None and (
                amiss := unmatched(patch, cwd)):
            return first[0].tool, amiss  # lines it takes out are not there: made up
        targets = re.findall(r"^\+\+\+ (?:b/)?(\S+)", patch, re.MULTILINE)
        if len(targets) != 1 or targets[0] == "/dev/null" or os.path.lexists(
                os.path.join(cwd, targets[0])):
            return None
        # a name some file here has is a slip of its path ("util.py" for src/util.py),
        # no new file: written whole instead, its content would be the model's
        name = os.path.basename(targets[0])
        if any(p.rsplit("/", 1)[-1] == name for p in workspace_paths(cwd)) or (
                prompt and not any(os.path.basename(d).lower() == name.lower()
                                   for d in named_documents(prompt))):
            return None
        return first[0].tool, targets[0]

    def unasked_record(self, text: str, prompt: str) -> str:
        """The tool of ``text``'s first step when it records text (`records_text`) and
        the request asks for nothing to be kept ("turn debug on in the settings file"
        had been noted as "Debug mode is turned on"); else empty."""
        first = self.first_step(text)
        return first[0].tool if first is not None and first[1] is not None and \
            records_text(first[1]) and not RECORDS.search(prompt) else ""

    def overwritten(self, text: str, prompt: str, cwd: str) -> tuple[str, str] | None:
        """``(tool, path)`` when ``text``'s first step writes a whole file that is here
        (a path and its ``content`` or ``text``) to change text the request quotes from
        it, losing its other lines ("in todo.md make 'ship' say 'ship v1.0'" planned as
        writing todo.md as "ship v1.0"): an edit was asked, not a new file."""
        first = self.first_step(text)
        if first is None or first[1] is None or not isinstance(
                content := first[0].args.get("content", first[0].args.get("text")), str) \
                or "append" in first[0].tool or first[0].args.get("append") is True:
            return None  # an append loses nothing
        props = first[1].args_schema.get("properties", {})
        paths = [v for k, v in first[0].args.items() if isinstance(v, str)
                 and props.get(k, {}).get("x-adjutant-role") == "path"]
        if len(paths) != 1 or not (real := here(cwd, paths[0])) or not os.path.isfile(
                full := os.path.join(cwd, real)) or os.path.getsize(full) > 65536:
            return None
        try:
            with open(full, encoding="utf-8") as file:
                old = file.read()
        except (OSError, UnicodeDecodeError):
            return None
        if _WHOLE.search(prompt):  # "replace the whole todo list with ...": as asked
            return None
        quoted = [q[1:-1] for q in QUOTED.findall(prompt) if len(q) > 3]
        lost = [line for line in old.splitlines() if line.strip() and line not in content]
        return (first[0].tool, real) if lost and (any(q in old for q in quoted) or _AT_END.search(
            prompt)) else None  # or text to add at its end ("stick X at the bottom of todo")

    @staticmethod
    def claimed(text: str, prompt: str) -> bool:
        """Whether ``text`` answers an order in words saying it was carried out, which
        words never do (`claims_done`)."""
        try:
            reply = parse_reply(text)
        except ContractError:
            return False
        if isinstance(reply, Response) and claims_done(reply.text, prompt):
            _log.info("claimed: %r was answered %r; nothing was done", prompt[:80], text[:120])
            return True
        return False

    def echoed(self, text: str, prompt: str, cwd: str) -> bool:
        """Whether ``text``, the model's reply, is an answer in words that only repeats a
        request naming a file ("show me README.md" answered "README.md", "create
        NOTES.md containing: hi" answered "hi"), or, to an order naming a file here,
        words about that file ("montre-moi le fichier notes.txt" answered "The file
        notes.txt is located in the working directory": it has not read it), or, to a
        question about what a file holds, words about it ("what does the CHANGELOG say
        about 1.0?" answered "The CHANGELOG states that 1.0 is a beta"), or an order
        said back in three words or more of its own ("Read the app log" answered "Read
        the app log."): it did nothing, so a tool is chosen again."""
        try:
            reply = parse_reply(text)
        except ContractError:
            return False
        if not isinstance(reply, Response) or wants_words(prompt) or wants_words_anyway(prompt):
            return False
        if not named_documents(prompt):  # an order said back ("Read the app log" answered
            words = {w.strip(".,!?;:") for w in reply.text.lower().split()}  # "Read the
            return (len(words) >= 3 and echoes(reply.text, prompt)  # app log.")
                    and not is_question(prompt) and spelled(prompt).split()[0].lower() in words)
        said = reply.text.lower()
        return echoes(reply.text, prompt) or (not is_question(prompt) and any(
            os.path.basename(p.rstrip("/")).lower() in said
            for p in self.existing(prompt, cwd))) or (asks_content(prompt) and any(
                os.path.basename(p).split(".", 1)[0].lower() in said
                for p in named_documents(prompt)))

    def past_plans(self, prompt: str, names: Sequence[str], k: int = PAST_PLANS,
                   ) -> list[Example]:
        """This user's earlier successful plans for requests like ``prompt``, from every
        plan recaller, whose steps are all offered tools now. A recaller that fails is
        logged and left out; a malformed plan is skipped."""
        offered = set(names)
        found: list[Example] = []
        for recaller in self.kernel.plan_recallers.values():
            try:
                pairs = recaller.similar_plans(prompt, k)
            except Exception as exc:  # a plugin's bug must not stop the request
                _log.warning("plan recaller %s failed: %s: %s", recaller.name,
                             type(exc).__name__, exc)
                continue
            for request, plan_json in pairs[:k]:
                try:
                    steps = tuple((s["tool"], s.get("args") or {})
                                  for s in json.loads(plan_json)["steps"])
                except (ValueError, TypeError, KeyError):
                    continue
                if steps and all(isinstance(t, str) and t in offered for t, _ in steps):
                    found.append(Example(str(request), steps))
        return found

    async def generate(self, request: CompletionRequest, run: Run, attempt: int,
                       provider: Any, *, part: str = "") -> str:
        """The model's reply, streamed to the run's subscribers as it comes (the usage
        the backend reported, if any, in ``run.usage``); an answer in words cut by the
        token limit closed (`closed_answer`)."""
        message_id = f"{run.run_id}-model-{attempt}{part}"
        run.usage = None
        run.publish(TextMessageStart(message_id=message_id))
        pieces, ended = [], False
        try:
            async with aclosing(provider.complete(request)) as stream:
                async for chunk in stream:
                    ended = chunk.finish_reason == "stop"
                    if chunk.usage is not None:
                        run.usage = chunk.usage
                    if chunk.text:
                        pieces.append(chunk.text)
                        run.publish(TextMessageContent(message_id=message_id,
                                                       delta=chunk.text))
                    for warning in chunk.warnings:
                        await self.log.record(ProviderWarningRecord(run_id=run.run_id,
                                                                    text=warning))
                        run.publish(ActivitySnapshot(message_id=f"{message_id}-warning",
                                                     activity_type="warning",
                                                     content={"text": warning}))
        finally:
            run.publish(TextMessageEnd(message_id=message_id))
        # an answer in words the token limit cut is kept to its whole sentences: asked
        # again, the simpler prompt's free choice had planned a read of a random file
        text = "".join(pieces)
        if not request.grammar:  # under a grammar, <END> is only ever text in a string
            text, cut, _ = text.partition(END)
            ended = ended or bool(cut)
        return closed_answer(text, ended=ended)


def _planned(prompt: str, cwd: str = "") -> str:
    """What the model plans from: ``prompt``, a diff it carries only mentioned
    (`carried_patch`; the diff itself goes into the plan as pasted), a long request's
    scene left out where its last sentence asks alone (`the_ask`; its values are still
    read from the whole request)."""
    carried = carried_patch(prompt)
    if carried:
        return carried[1]
    if cwd and (ask := the_ask(prompt, names_here(cwd) | {
            n.lower() for n in git_names(cwd)})) != prompt:
        _log.info("the ask: %r plans from its last sentence %r", prompt[:60], ask)
        return ask
    return prompt

"""The hook specifications: every kind of Adjutant plugin, as pluggy hooks.

Registration hooks take a ``register`` callback (llm/tox style) rather than
returning lists, so the kernel validates each object as it is handed over and can
name the plugin at fault. All hooks are synchronous; the registered objects carry
the async methods. Only `startup` and `shutdown` may return an awaitable, which
the kernel awaits (startup in load order, shutdown in reverse). No hook is
``historic``: the kernel calls a plugin's registration hooks itself when that plugin
is added, so a late plugin registers like an early one.

Hooks are called by pluggy, so its options mean what pluggy documents: the plugin
loaded last is called first, ``tryfirst``/``trylast`` move an implementation, and
``wrapper=True`` (or old-style ``hookwrapper=True``) wraps ``pre_tool_use`` and
``confirmation_details``. Registration and lifecycle hooks are called one plugin at
a time, so there is no call to wrap: a wrapper on them is refused at load.

The hook reference in ``docs/hooks.md`` is generated from these docstrings
(``python -m adjutant.docs``); a test fails when a hook or one of its arguments is
undocumented.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ._markers import hookspec

if TYPE_CHECKING:
    from ._contracts import ExecutionResult, ToolCall, ToolDeclaration
    from ._copilot import CopilotAnalyzer
    from ._embedding import Embedder
    from ._events import Event
    from ._kernel import Kernel
    from ._protocols import (
        Check,
        Command,
        ContextProvider,
        Frontend,
        KeyValueStore,
        LogStore,
        Policy,
        Provider,
        Tool,
        Verdict,
    )
    from ._recall import PlanRecaller
    from ._speech import SpeechEngine, SpeechRecognizer
    from ._tasks import TaskCapability

__all__ = ["AdjutantSpec"]


class AdjutantSpec:
    """Hook specifications of the ``adjutant`` project."""

    # -- registration -----------------------------------------------------------------

    @hookspec
    def register_providers(self, register: Callable[[Provider], None]) -> None:
        """Register model providers (llama.cpp, Ollama, OpenRouter, MLX, ...).

        :param register: Call once per provider with an object satisfying
            :class:`~adjutant_hookspecs.Provider`. Its ``name`` must be unique across
            all plugins; model presets select a provider by that name.

        Returns nothing. Called once per plugin, in load order, when the plugin is
        loaded; a plugin registered later is called then. Construct clients lazily:
        this runs at start-up, so open no connection and import no heavy library here.

        .. versionadded:: 0.1
        """

    @hookspec
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        """Register tools the operator can plan with.

        :param register: Call once per tool with an object satisfying
            :class:`~adjutant_hookspecs.Tool`. Its ``declaration`` is validated (name,
            JSON schema of the arguments, safety declaration); a name already taken
            by another plugin is an error naming both plugins, and the later plugin is
            skipped as a whole.

        Returns nothing. Called once per plugin, in load order.

        .. versionadded:: 0.1
        """

    @hookspec
    def register_context_providers(self, register: Callable[[ContextProvider], None]) -> None:
        """Register sources of the context bulletin (git state, shell history, focus).

        :param register: Call once per provider with an object satisfying
            :class:`~adjutant_hookspecs.ContextProvider`; ``name`` is what profiles
            switch on and off.

        Returns nothing. Contributions are merged in plugin load order.

        .. versionadded:: 0.1
        """

    @hookspec
    def register_policies(self, register: Callable[[Policy], None]) -> None:
        """Register safety policies for the policy chain (step 3 of the pipeline).

        :param register: Call once per policy with an object satisfying
            :class:`~adjutant_hookspecs.Policy`. Every policy sees every step and
            answers a :class:`~adjutant_hookspecs.Verdict`; deny beats ask beats
            allow, and the verdict records which policy decided. A policy with no
            opinion on a step returns ``Verdict.abstain()``, never ``allow``.

        Returns nothing. With no policy registered at all, or when every policy and
        ``pre_tool_use`` hook abstains, the step asks. Write a Policy when the
        judgement needs the situation (cwd, cages, grants, history) or I/O; write a
        ``pre_tool_use`` hook for a quick synchronous veto from the call alone.

        .. versionadded:: 0.1
        """

    @hookspec
    def register_stores(self, register: Callable[[KeyValueStore | LogStore], None]) -> None:
        """Register storage backends (action log, key/value state).

        :param register: Call once per store with an object satisfying
            :class:`~adjutant_hookspecs.KeyValueStore` or
            :class:`~adjutant_hookspecs.LogStore`; ``kind`` says which. Names are
            unique; settings choose the backend per kind by name.

        Returns nothing. Open files lazily (in `startup` or on first use).

        .. versionadded:: 0.1
        """

    @hookspec
    def register_frontends(self, register: Callable[[Frontend], None]) -> None:
        """Register frontends (terminal, web dock, voice) that serve the operator.

        :param register: Call once per frontend with an object satisfying
            :class:`~adjutant_hookspecs.Frontend`.

        Returns nothing.

        .. versionadded:: 0.1
        """

    @hookspec
    def register_commands(self, register: Callable[[Command], None]) -> None:
        """Add subcommands to the ``adjutant`` command line.

        :param register: Call once per subcommand with a
            :class:`~adjutant_hookspecs.Command`. Names are unique across plugins;
            the built-in commands (``version``, ``plugins``, ``doctor``) are
            registered through this same hook.

        Returns nothing. Keep ``configure`` and module import cheap: this runs for
        every ``adjutant --help``.

        .. versionadded:: 0.1
        """

    @hookspec
    def register_checks(self, register: Callable[[Check], None]) -> None:
        """Add environment checks to ``adjutant doctor``.

        :param register: Call once per check with a
            :class:`~adjutant_hookspecs.Check`. A check's ``run(kernel)`` returns a
            :class:`~adjutant_hookspecs.CheckResult` whose ``fix`` tells the user what
            to do when the status is not ``ok``.

        Returns nothing. Checks run in registration order and must not raise; the
        doctor reports an exception as a failed check.

        .. versionadded:: 0.1
        """

    @hookspec
    def register_events(self, register: Callable[[type[Event]], None]) -> None:
        """Declare the event types this plugin publishes on the bus.

        :param register: Call once per event class, a subclass of
            :class:`~adjutant_hookspecs.CustomEvent` with a dotted lower-case tag
            (``tag="myplugin.thing"``). Declaring a name another plugin already
            declared is an error naming both. Publishing an undeclared event raises.

        Returns nothing. The standard AG-UI events are declared by the kernel itself.

        .. versionadded:: 0.1
        """

    @hookspec
    def register_speech_engines(self, register: Callable[[SpeechEngine], None]) -> None:
        """Register text-to-speech engines (an embedded voice, espeak-ng, a TTS server).

        :param register: Call once per engine with an object satisfying
            :class:`~adjutant_hookspecs.SpeechEngine`. Its ``name`` must be unique
            across all plugins; the profile's ``speech.engine`` selects one by that name.

        Returns nothing. Called once per plugin, in load order. Load models and open
        connections on first use, never here: this runs for every ``adjutant`` command.
        The kernel closes each engine (``aclose``) when it stops.

        .. versionadded:: 0.2
        """

    @hookspec
    def register_speech_recognizers(self, register: Callable[[SpeechRecognizer], None]) -> None:
        """Register speech-to-text engines (the embedded Whisper, a hosted model).

        :param register: Call once per recognizer with an object satisfying
            :class:`~adjutant_hookspecs.SpeechRecognizer`. Its ``name`` must be unique
            across all plugins; the profile's ``plugins.stt.engine`` selects one by that
            name. A recognizer whose ``remote`` is True is only used when the user
            names it, and only after the user consented to its ``destination``.

        Returns nothing. Called once per plugin, in load order; the kernel keeps them
        in ``kernel.speech_recognizers``. Load models and open connections on first
        use only: this runs for every ``adjutant`` command.

        .. versionadded:: 0.2
        """

    @hookspec
    def register_settings(self, register: Callable[[type[Any]], None]) -> None:
        """Declare this plugin's settings.

        :param register: Call once with an ``attrs`` class whose every field has a
            default (an empty section is valid). The user's values live in the
            profile under ``plugins: {<plugin name>: {...}}`` and are validated like
            the rest of the profile: strict types, no unknown keys, every problem
            reported as ``reason @ $.plugins.<name>.<field>``.

        Returns nothing. Called once per plugin, in load order. Read the values with
        ``kernel.plugin_settings(<the class>)``, typically in
        ``startup``; ``adjutant doctor`` checks every plugin's section and shows it.

        .. versionadded:: 0.3
        """

    # -- safety -------------------------------------------------------------------------

    @hookspec
    def pre_tool_use(
        self, call: ToolCall, declaration: ToolDeclaration, mode: str
    ) -> Verdict | None:
        """Check one validated tool call just before it would run; veto or demand approval.

        :param call: The call about to run, arguments already schema-validated.
        :param declaration: The declaration of the tool being called.
        :param mode: The operator mode: ``off``, ``listen-only``, ``propose-only``,
            ``execute-with-confirmation`` or ``execute-auto``.

        Return a :class:`~adjutant_hookspecs.Verdict` (``deny`` vetoes, ``ask``
        demands an explicit approval) or ``None`` (or ``Verdict.abstain()``) to
        abstain. All implementations are called, once when the step is checked and
        again right before it runs, in pluggy's order (the plugin loaded last first;
        ``tryfirst``/``trylast`` move one); their verdicts join the policy chain, so
        deny beats ask beats allow, and of equal verdicts the first is the one shown.
        Must be synchronous and fast. Fail closed: an exception, or a return value
        that is neither a ``Verdict`` nor ``None``, counts as a deny naming the
        plugin, and the other implementations still run. A ``wrapper=True`` (or
        ``hookwrapper=True``) implementation receives the list of verdicts from its
        ``yield`` (failures already turned into denies) and returns the list that
        counts; a wrapper that raises or returns anything but a list of verdicts is
        a deny naming it.

        .. versionadded:: 0.1
        """

    @hookspec
    def confirmation_details(
        self, call: ToolCall, declaration: ToolDeclaration, preview: ExecutionResult, cwd: str
    ) -> dict[str, Any] | None:
        """Add to the confirmation packet the user sees before approving a step.

        :param call: The call awaiting approval.
        :param declaration: The declaration of the tool being called.
        :param preview: Its dry-run result (``dry_run_diff`` is the exact effect).
        :param cwd: The working directory the call runs in.

        Return a dict of JSON-compatible fields (``target``, ``current``,
        ``proposed``, ``impact``, ``risk``, ...) or ``None``. All implementations are
        called in pluggy's order (the plugin loaded last first; ``tryfirst`` and
        ``trylast`` move one) and their dicts merged into ``StepPacket.details``;
        the implementation called first wins a key. Must not change anything; an
        exception or a value that is not a dict is reported in the packet as an
        entry of ``details["errors"]`` naming the plugin, never hidden. A wrapper
        receives the list of dicts from its ``yield`` and returns the list merged.

        .. versionadded:: 0.1
        """

    # -- lifecycle ----------------------------------------------------------------------

    @hookspec
    def startup(self, kernel: Kernel) -> Awaitable[None] | None:
        """The kernel has loaded every plugin and is starting.

        :param kernel: The :class:`adjutant.Kernel`; its registries and bus are ready.

        Return ``None`` or an awaitable, which the kernel awaits before the next
        plugin starts (plugins in load order; ``tryfirst``/``trylast`` move one to
        the front or the back; a wrapper is refused at load). If one raises, the
        plugins already started are shut down and the kernel raises
        ``RuntimeError("plugin 'x' failed to start: ...")`` with the original as its
        cause: a kernel that cannot start does not pretend to.
        Plugins added to a running kernel do not get this hook.

        .. versionadded:: 0.1
        """

    @hookspec
    def shutdown(self, kernel: Kernel) -> Awaitable[None] | None:
        """The kernel is stopping; release what `startup` acquired.

        :param kernel: The :class:`adjutant.Kernel` being stopped.

        Return ``None`` or an awaitable. Called in the reverse of start-up order
        (``tryfirst``/``trylast`` move one to the front or the back), for every
        plugin even when another one's shutdown failed (failures are logged).

        .. versionadded:: 0.1
        """

    @hookspec
    def register_copilot_analyzers(self, register: Callable[[CopilotAnalyzer], None]) -> None:
        """Register implementations of the copilot's analysis (``copilot_analyze``).

        :param register: Call once per analyzer with an object satisfying
            :class:`~adjutant_hookspecs.CopilotAnalyzer`. Its ``name`` must be unique
            across all plugins. The live-recording agent uses the first registered
            analyzer that ``supports`` the active provider, ``native`` ones (the model
            hears the audio itself) before pipelines (speech-to-text, then the text
            model); with none, analysis is not supported
            (:class:`~adjutant_hookspecs.CopilotUnsupported`) and the agent does not start.

        Returns nothing. Called once per plugin, in load order; the kernel keeps them in
        ``kernel.copilot_analyzers``. Load models on first use only. What a recording
        says is data: an analyzer returns fields, never instructions.

        .. versionadded:: 0.3
        """

    @hookspec
    def register_embedders(self, register: Callable[[Embedder], None]) -> None:
        """Register text-embedding models (a local static model, Ollama's or
        OpenRouter's embeddings).

        :param register: Call once per embedder with an object satisfying
            :class:`~adjutant_hookspecs.Embedder`. Its ``name`` must be unique across
            all plugins; ``adjutant-memory``'s ``plugins.memory.embedder`` selects one by
            that name. An embedder whose ``remote`` is True is only used when the user
            names it: the project's text then goes to its ``destination``.

        Returns nothing. Called once per plugin, in load order; the kernel keeps them
        in ``kernel.embedders``. Load models and open connections on first use only:
        this runs for every ``adjutant`` command. Whoever stores vectors keeps each
        one with the embedder's ``model_id`` and ``dimension``.

        .. versionadded:: 0.3
        """

    @hookspec
    def register_plan_recallers(self, register: Callable[[PlanRecaller], None]) -> None:
        """Register sources of this user's past successful plans (``adjutant-memory``
        recalls them from the action log).

        :param register: Call once per recaller with an object satisfying
            :class:`~adjutant_hookspecs.PlanRecaller`. Its ``name`` must be unique
            across all plugins.

        Returns nothing. Called once per plugin, in load order; the kernel keeps them
        in ``kernel.plan_recallers``. Before it chooses a request's first step, the
        planner asks each for a few plans of similar earlier requests; their first
        tools vote beside the bundled bank's worked examples (never their values). A
        recaller that raises is logged and left out of that request.

        .. versionadded:: 0.3
        """

    # -- durable tasks ------------------------------------------------------------------

    @hookspec
    def register_task_capabilities(self, register: Callable[[TaskCapability], None]) -> None:
        """Register work the task runner can queue (``doc.summarize``, ``ocr.pdf``).

        :param register: Call once per capability with an object satisfying
            :class:`~adjutant_hookspecs.TaskCapability`: a ``name`` unique across all
            plugins, the ``resource`` it holds while it runs (one task at a time per
            resource), ``timeout_s`` for one attempt, whether its failures are
            ``retryable``, and ``async run(context)`` returning the outputs.

        Returns nothing. Called once per plugin, in load order; the kernel keeps them
        in ``kernel.task_capabilities``. Load models on first use only: this runs for
        every ``adjutant`` command. A capability's ``run`` may be resumed after a crash
        from the checkpoint it saved, so it must not assume it starts fresh.

        .. versionadded:: 0.3
        """

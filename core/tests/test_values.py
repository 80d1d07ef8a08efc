"""A plan never carries a value copied from a worked example that the request does not
state: the example's pid, path or message (pure; no model)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from adjutant.operator._values import inputs_as_here, paths_as_named, without_copied_values
from adjutant_hookspecs import Plan, Response, ToolCall, ToolDeclaration

REGISTRY = Path(__file__).resolve().parents[2] / "plugins"
TOOLS = {d.name: d for d in (msgspec.json.decode(f.read_bytes(), type=ToolDeclaration)
                             for f in REGISTRY.glob("adjutant-*/registry/tools/*.json"))}
SHOWN = ('Request: stop process 4242\nAnswer: {"type":"plan","steps":[{"tool":"proc.kill",'
         '"args":{"pid":4242}}]}\nRequest: list the node processes\nAnswer: {"type":"plan",'
         '"steps":[{"tool":"proc.list","args":{"name":"node"}}]}\nRequest: run make test\n'
         'Answer: {"type":"plan","steps":[{"tool":"shell.exec","args":{"argv":["make","test"]}}]}')


def plan(*steps: tuple[str, dict]) -> Plan:
    return Plan(steps=tuple(ToolCall(tool=t, args=a) for t, a in steps))


def test_a_required_value_from_an_example_drops_the_step_and_says_what_is_missing() -> None:
    got = without_copied_values(plan(("proc.kill", {"pid": 4242})), "run the test suite",
                                SHOWN, TOOLS)
    assert isinstance(got, Response) and "pid" in got.text and "4242" not in got.text
    kept = without_copied_values(plan(("git.status", {}), ("proc.kill", {"pid": 4242})),
                                 "check the status and stop the server", SHOWN, TOOLS)
    assert kept == plan(("git.status", {}))


def test_a_required_number_the_request_states_replaces_the_examples() -> None:
    """The model copied an example's port for "port 8080 on ::1"; the number said of the
    port is the port. Two numbers said of it decide nothing: the step is dropped."""
    shown = SHOWN + '\nAnswer: {"type":"plan","steps":[{"tool":"net.check_port",' \
        '"args":{"port":8000}}]}'
    got = without_copied_values(plan(("net.check_port", {"port": 8000, "host": "::1"})),
                                "anything listening on port 8080 on ::1?", shown, TOOLS)
    assert got == plan(("net.check_port", {"port": 8080, "host": "::1"}))
    two = without_copied_values(plan(("net.check_port", {"port": 8000})),
                                "is port 8080 or port 9090 open?", shown, TOOLS)
    assert isinstance(two, Response) and "port" in two.text


def test_numbers_spelled_out_are_stated_values() -> None:
    """"port eight thousand and eighty" states 8080 (heldout12, after its blind run: the
    plan became "I could not tell the port"); quoted text keeps its words."""
    from adjutant.operator._stated import settled_values
    from adjutant.operator._words import with_digits

    assert with_digits("is port eight thousand and eighty free? the last five commits") \
        == "is port 8080 free? the last 5 commits"
    assert with_digits("write 'one hundred percent' to notes.txt") \
        == "write 'one hundred percent' to notes.txt"
    # in the language of the request (heldout37 and 38, after their runs: no count)
    assert with_digits("muéstrame los últimos cuatro commits, por favor") \
        == "muéstrame los últimos 4 commits, por favor"
    assert with_digits("Zeig mir bitte die letzten drei Commits") \
        == "Zeig mir bitte die letzten 3 Commits"
    assert with_digits("let the app die in peace, five times") \
        == "let the app die in peace, 5 times"
    shown = '{"tool":"net.check_port","args":{"port":8000}}'
    got = settled_values(plan(("net.check_port", {"port": 8000})),
                         "anything listening on port eight thousand and eighty?", shown, TOOLS)
    assert got == plan(("net.check_port", {"port": 8080}))
    counted = settled_values(plan(("git.log", {})), "show me the last twenty commits", "",
                             TOOLS)
    assert counted == plan(("git.log", {"max_count": 20}))
    kept = settled_values(plan(("fs.write", {"path": "n.txt", "content": "one hundred\n"})),
                          "write 'one hundred' to n.txt", "", TOOLS)
    assert kept == plan(("fs.write", {"path": "n.txt", "content": "one hundred\n"}))


def test_an_optional_value_from_an_example_is_left_out() -> None:
    got = without_copied_values(plan(("proc.list", {"name": "node"})), "list my processes",
                                SHOWN, TOOLS)
    assert got == plan(("proc.list", {}))


def test_values_the_request_states_or_the_workspace_holds_stay(tmp_path: Path) -> None:
    stated = plan(("proc.list", {"name": "node"}))
    assert without_copied_values(stated, "list the node processes please", SHOWN,
                                 TOOLS) == stated
    assert without_copied_values(plan(("proc.kill", {"pid": 4242})), "kill 4242", SHOWN,
                                 TOOLS) == plan(("proc.kill", {"pid": 4242}))
    # a value no example holds is the model's own reading, not a copy
    own = plan(("proc.list", {"name": "python"}))
    assert without_copied_values(own, "list the snakes", SHOWN, TOOLS) == own
    # a file here is grounded even when an example named it too
    (tmp_path / "node").mkdir()
    assert without_copied_values(stated, "list what runs", SHOWN, TOOLS,
                                 str(tmp_path)) == stated


def test_a_command_line_described_in_words_is_not_a_copy() -> None:
    """"run the tests" names no program; the preview shows the exact argv."""
    inferred = plan(("shell.exec", {"argv": ["make", "test"]}))
    assert without_copied_values(inferred, "run the tests", SHOWN, TOOLS) == inferred


def test_a_value_made_of_the_requests_own_words_is_stated() -> None:
    """"the TODOs" states TODO; "zip the src folder" states src.zip."""
    shown = SHOWN + '{"pattern":"TODO"} {"paths":["src"],"output":"src.zip"}'
    todo = plan(("search.grep", {"pattern": "TODO"}))
    assert without_copied_values(todo, "find all the TODOs", shown, TOOLS) == todo
    zipped = plan(("compress.zip", {"paths": ["src"], "output": "src.zip"}))
    assert without_copied_values(zipped, "zip the src folder", shown, TOOLS) == zipped
    copied = without_copied_values(zipped, "zip the lib folder", shown, TOOLS)
    assert isinstance(copied, Response) and "paths" in copied.text  # src is the example's


def test_a_tool_the_request_names_by_its_verb_is_a_stated_capability() -> None:
    """"every weekday at 7:30 summarize the PDFs": the schedule's capability is the
    summarizer the request names by its verb, though only an example spells it out; an
    offered tool the request does not name stays a copy."""
    shown = SHOWN + ('\nRequest: queue a summary\nAnswer: {"type":"plan","steps":[{"tool":'
                     '"schedule.task","args":{"capability":"doc.summarize"}}]}\n'
                     '"capability":"git.commit"')
    def declared(name: str, required: list[str]) -> ToolDeclaration:
        return ToolDeclaration(name=name, version="1", description=name, args_schema={
            "type": "object", "properties": {k: {"type": "string"} for k in required},
            "required": required})

    tools = TOOLS | {"schedule.task": declared("schedule.task", ["capability"]),
                     "doc.summarize": declared("doc.summarize", [])}
    summary = plan(("schedule.task", {"capability": "doc.summarize", "cron": "30 7 * * 1-5"}))
    assert without_copied_values(summary, "every weekday at 7:30 summarize the PDFs here",
                                 shown, tools) == summary
    # a tool copied from an example is the one the request names by its verb instead
    commit = plan(("schedule.task", {"capability": "git.commit", "cron": "30 7 * * 1-5"}))
    assert without_copied_values(commit, "every weekday at 7:30 summarize the PDFs here",
                                 shown, tools) == summary
    # naming none, or two ("list": the files' and the processes'), it is still a copy
    for asked in ("every weekday at 7:30 do the usual", "every weekday at 7:30 list them"):
        got = without_copied_values(commit, asked, shown, tools)
        assert isinstance(got, Response) and "capability" in got.text, asked


def test_a_path_neither_named_nor_hinted_is_the_one_file_the_request_names(
        tmp_path: Path) -> None:
    """"what does the CHANGELOG say about version 1.0?" had been a read of README.md (a
    file of the examples, here too); a path the request hints at ("the readme") stays,
    and a request naming two files changes nothing."""
    (tmp_path / "README.md").write_text("# x\n")
    (tmp_path / "CHANGELOG.md").write_text("## 1.0\n")
    read = plan(("fs.read", {"path": "README.md"}))
    assert paths_as_named(read, "what does the CHANGELOG say about version 1.0?", TOOLS,
                          str(tmp_path)) == plan(("fs.read", {"path": "CHANGELOG"}))
    assert paths_as_named(read, "show me the Makefile", TOOLS, "") == plan(
        ("fs.read", {"path": "Makefile"}))
    assert paths_as_named(read, "what does the readme say about 1.0?", TOOLS,
                          str(tmp_path)) == read
    assert paths_as_named(read, "compare CHANGELOG.md and notes.txt", TOOLS,
                          str(tmp_path)) == read
    assert paths_as_named(read, "open changelog.MD", TOOLS, str(tmp_path)) == plan(
        ("fs.read", {"path": "CHANGELOG.md"}))


def test_a_path_read_that_is_not_here_is_the_one_file_it_names_here(tmp_path: Path) -> None:
    """"bundle the readme and the guide into handover.zip" had been an archive of
    readme.md and guide.md: README.md and docs/guide.md are here. A path a write makes,
    one that two files could be, and one outside stay as written."""
    for name in ("README.md", "docs/guide.md", "a/x.txt", "b/x.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    here = str(tmp_path)
    zipped = plan(("compress.zip", {"paths": ["readme.md", "guide.md", "x.txt"],
                                    "output": "handover.zip"}))
    assert inputs_as_here(zipped, TOOLS, here) == plan(("compress.zip", {
        "paths": ["README.md", "docs/guide.md", "x.txt"], "output": "handover.zip"}))
    assert inputs_as_here(plan(("fs.read", {"path": "GUIDE.md"})), TOOLS, here) == plan(
        ("fs.read", {"path": "docs/guide.md"}))
    for kept in (plan(("fs.write", {"path": "guide.md", "content": "new\n"})),
                 plan(("fs.read", {"path": "../guide.md"})),
                 plan(("fs.read", {"path": "/etc/guide.md"})),
                 plan(("fs.write", {"path": "../readme.md", "content": "x\n"}))):
        assert inputs_as_here(kept, TOOLS, here) == kept
    # a write's one file here in another case is that file, not a second one beside it
    # (heldout42, after its run: "add ... to Notes.txt" had made Notes.txt by notes.txt)
    assert inputs_as_here(plan(("fs.append", {"path": "readme.MD", "content": "x\n"})),
                          TOOLS, here) == plan(("fs.append", {"path": "README.md",
                                                              "content": "x\n"}))


def test_a_read_of_a_name_one_typing_slip_from_one_file_here_reads_that_file(
        tmp_path: Path) -> None:
    """"What's in setings.json?" (heldout12, after its blind run) read setings.json, which
    is not here: config/settings.json is one slip from it. A short name, or one a slip
    from two files, stays as written (the preview says it is missing)."""
    for name in ("config/settings.json", "notes.txt", "notes.old", "a/report1.txt", "a.txt",
                 "b/report2.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    here = str(tmp_path)
    assert inputs_as_here(plan(("fs.read", {"path": "setings.json"})), TOOLS, here) == plan(
        ("fs.read", {"path": "config/settings.json"}))
    assert inputs_as_here(plan(("fs.read", {"path": "note.txt"})), TOOLS, here) == plan(
        ("fs.read", {"path": "notes.txt"}))
    for kept in (plan(("fs.read", {"path": "a.tx"})),  # short: left as written
                 plan(("fs.read", {"path": "report.txt"})),  # report1 or report2
                 plan(("fs.write", {"path": "setings.json", "content": "{}\n"}))):
        assert inputs_as_here(kept, TOOLS, here) == kept, kept


def test_a_later_steps_path_named_only_in_quoted_text_is_the_step_befores() -> None:
    """"open the guide in docs and then add a line at the end: 'Logs are written to
    logs/app.log.'" (heldout12, after its blind run) appended to logs/app.log: that path
    is the line's words, not a place. A quoted name is a place ("create 'report.md'"),
    and so is a path the request also names outside quotes."""
    from adjutant.operator._values import joined, paths_not_quoted

    asked = ("open the guide in docs and then add a line at the end: 'Logs are written to "
             "logs/app.log.'")
    read = plan(("fs.read", {"path": "docs/guide.md"}))
    append = plan(("fs.append", {"path": "logs/app.log",
                                 "content": "Logs are written to logs/app.log.\n"}))
    fixed = plan(("fs.read", {"path": "docs/guide.md"}),
                 ("fs.append", {"path": "docs/guide.md",
                                "content": "Logs are written to logs/app.log.\n"}))
    assert joined([read, append], asked, TOOLS) == fixed  # clause by clause
    assert paths_not_quoted(Plan(steps=read.steps + append.steps), asked, TOOLS) == fixed
    for kept_asked in ("read notes.txt and then write 'see logs/app.log for more' to "
                       "logs/app.log",  # named outside the quote too
                       "read docs/guide.md, then append 'x y z' to 'logs/app.log'"):
        kept = plan(("fs.read", {"path": "docs/guide.md"}),
                    ("fs.append", {"path": "logs/app.log", "content": "x\n"}))
        assert paths_not_quoted(kept, kept_asked, TOOLS) == kept, kept_asked
    assert joined([Response(text="hi")], "hello", TOOLS) == Response(text="hi")


def test_a_command_lines_file_with_an_ending_of_the_models_own_is_the_one_here(
        tmp_path: Path) -> None:
    """"count README lines with wc" (tuning set) ran `wc README.txt`: README.md is the one
    README here. A name the request writes, or one two files share, stays."""
    from adjutant.operator._values import argv_files_as_here

    for name in ("README.md", "notes.txt", "notes.old"):
        (tmp_path / name).write_text("x\n")
    here = str(tmp_path)
    ran = plan(("shell.exec", {"argv": ["wc", "-l", "README.txt"]}))
    assert argv_files_as_here(ran, "count README lines with wc", TOOLS, here) == plan(
        ("shell.exec", {"argv": ["wc", "-l", "README.md"]}))
    for asked, argv in (("count the lines of README.txt with wc", ["wc", "README.txt"]),
                        ("count notes lines with wc", ["wc", "notes.md"]),  # two notes
                        ("count the readme's lines", ["wc", "LICENSE.txt"])):  # unsaid
        kept = plan(("shell.exec", {"argv": argv}))
        assert argv_files_as_here(kept, asked, TOOLS, here) == kept, asked


def test_a_read_of_one_of_the_files_a_request_lists_reads_each(tmp_path: Path) -> None:
    """"can you read src/app.py and src/util.py for me" (heldout14, after its blind run)
    read only the first. A list here is read whole, in order; files not side by side,
    or not all here, or a tool that writes, are the plan's own."""
    from adjutant.operator._values import each_listed

    for name in ("src/app.py", "src/util.py", "notes.txt", "todo.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    here = str(tmp_path)
    one = plan(("fs.read", {"path": "src/app.py"}))
    assert each_listed(one, "can you read src/app.py and src/util.py for me", TOOLS,
                       here) == plan(("fs.read", {"path": "src/app.py"}),
                                     ("fs.read", {"path": "src/util.py"}))
    assert each_listed(plan(("fs.read", {"path": "notes.txt"})),
                       "show notes.txt, todo.md and src/app.py", TOOLS, here) == plan(
        ("fs.read", {"path": "notes.txt"}), ("fs.read", {"path": "todo.md"}),
        ("fs.read", {"path": "src/app.py"}))
    for asked in ("read src/app.py, then tell me if todo.md mentions milk",
                  "read src/app.py and src/missing.py", "read src/app.py"):
        assert each_listed(one, asked, TOOLS, here) == one, asked
    write = plan(("fs.write", {"path": "notes.txt", "content": "x\n"}))
    assert each_listed(write, "write notes.txt and todo.md", TOOLS, here) == write


def test_an_archive_is_not_its_own_input(tmp_path: Path) -> None:
    """"Bundle config/settings.json together with the logs folder into debug-bundle.zip"
    (heldout14, after its blind run) zipped debug-bundle.zip and logs: the output is
    taken out and the named file put in, in the request's order."""
    from adjutant.operator._values import output_not_input

    for name in ("config/settings.json", "logs/app.log"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    asked = ("Bundle config/settings.json together with the logs folder into "
             "debug-bundle.zip for the support ticket.")
    got = output_not_input(plan(("compress.zip", {"paths": ["debug-bundle.zip", "logs"],
                                                  "output": "debug-bundle.zip"})),
                           asked, TOOLS, str(tmp_path))
    assert got == plan(("compress.zip", {"paths": ["config/settings.json", "logs"],
                                         "output": "debug-bundle.zip"}))
    kept = plan(("compress.zip", {"paths": ["logs"], "output": "a.zip"}))
    assert output_not_input(kept, "zip logs into a.zip", TOOLS, str(tmp_path)) == kept


def test_two_reads_of_one_tool_that_differ_only_in_its_choices_are_one() -> None:
    """"which python version is installed here, and how many cpus are there?" (heldout14,
    after its blind run) was two sys.info steps: one, of both sections. One without
    sections (all of them) stays all; other tools and other values stay apart."""
    from adjutant.operator._values import joined

    python, cpu = plan(("sys.info", {"sections": ["python"]})), plan(
        ("sys.info", {"sections": ["cpu"]}))
    assert joined([python, cpu], "", TOOLS) == plan(("sys.info", {"sections": ["python",
                                                                               "cpu"]}))
    assert joined([plan(("sys.info", {})), cpu], "", TOOLS) == plan(("sys.info", {}))
    reads = [plan(("fs.read", {"path": "a.txt"})), plan(("fs.read", {"path": "b.txt"}))]
    assert joined(reads, "", TOOLS) == plan(("fs.read", {"path": "a.txt"}),
                                            ("fs.read", {"path": "b.txt"}))


def test_a_fact_kept_is_kept_as_said() -> None:
    """"remember that our staging port is 8443" had been kept as "staging port 8443",
    "jot down that fractions come before decimals" as "Fraction come before decimal.":
    the words the request asks to keep, as said. Words it did not say stay the model's."""
    from adjutant.operator._values import kept_as_said

    got = kept_as_said(plan(("memory.remember", {"text": "staging port 8443"})),
                       "remember that our staging port is 8443", TOOLS)
    assert got == plan(("memory.remember", {"text": "our staging port is 8443"}))
    got = kept_as_said(plan(("memory.note", {"text": "Fraction come before decimal."})),
                       "for tomorrow's class: jot down that fractions come before decimals",
                       TOOLS)
    assert got == plan(("memory.note", {"text": "fractions come before decimals"}))
    got = kept_as_said(plan(("memory.remember", {"text": "warehouse is the north one"})),
                       "Keep this as a fact about the project: the warehouse is the north one.",
                       TOOLS)  # carried after a colon (heldout13, after stop 45's run)
    assert got == plan(("memory.remember", {"text": "the warehouse is the north one."}))
    # its full stop left off (heldout19, 20 and 22, after their runs)
    got = kept_as_said(plan(("memory.note", {"text": "tests run with pytest", "append": False})),
                       "Replace the project notes entirely with: tests run with pytest.", TOOLS)
    assert got == plan(("memory.note", {"text": "tests run with pytest.", "append": False}))
    same = plan(("memory.note", {"text": "Spaces, not tabs.\n"}))  # as said: stays
    assert kept_as_said(same, "replace the project notes: spaces, not tabs", TOOLS) == same
    other = plan(("memory.note", {"text": "the plumber comes on monday"}))
    assert kept_as_said(other, "note that the vet opens at 9", TOOLS) == other
    read = plan(("fs.read", {"path": "notes.txt"}))
    assert kept_as_said(read, "remember that notes.txt matters", TOOLS) == read
    # all of it said, then a paragraph of the model's own (heldout17, after its run)
    longer = plan(("memory.note", {"text": "PDF summaries run on Mondays\n\nPlease note that "
                                           "this is a general knowledge question."}))
    assert kept_as_said(longer, "write in the project notes that PDF summaries run on "
                        "Mondays.", TOOLS) == plan(("memory.note", {
                            "text": "PDF summaries run on Mondays."}))  # its full stop too
    quoted = plan(("memory.note", {"text": "'a; b.'", "append": False}))  # heldout17
    assert kept_as_said(quoted, "Replace the project notes completely with: 'a; b.'",
                        TOOLS) == plan(("memory.note", {"text": "a; b.", "append": False}))


def test_a_colon_after_a_scene_opens_the_ask_not_its_content() -> None:
    """"for tomorrow's class: jot down that ..." had been read as an ask "for tomorrow's
    class" carrying content (a search); an ask before the colon still carries it."""
    from adjutant.operator._words import carried_text, content_cut

    assert content_cut("for tomorrow's class: jot down that fractions come first") \
        == "jot down "
    assert carried_text("for tomorrow's class: jot down that fractions come first") == ""
    assert carried_text("replace the project notes entirely with: Inventory service, v2") \
        == "Inventory service, v2"
    # an order to keep it, however short (heldout16, after stop 47's run: the note had
    # kept "Project note:" too)
    assert carried_text("Project note: the report runs with python3 src/app.py.") \
        == "the report runs with python3 src/app.py."
    assert carried_text("read: notes.txt") == ""


def test_a_recurring_time_said_is_the_schedules_cron() -> None:
    """"every Monday at 9am" had been scheduled daily, or once at 09:00; the capability
    "summarize" (no tool) is the summarizer the request names by its verb."""
    from adjutant.operator._when import cron_of, scheduled_as_said

    said = {"summarize the PDFs every Monday at 9am": "0 9 * * 1",
            "every weekday at 7:30 summarize the PDFs": "30 7 * * 1-5",
            "zip the logs every night at 11pm": "0 23 * * *",
            "run the tests every 2 hours": "0 */2 * * *",
            "every 15 minutes list the processes": "*/15 * * * *",
            "every friday at 5 pm zip the logs": "0 17 * * 5",
            "every day at noon check git status": "0 12 * * *",
            "every morning summarize the PDFs": "",  # no time of day said: not guessed
            "what runs every monday at 9?": "",  # a question schedules nothing
            "remember: backups run nightly at 2": "",  # a fact kept, not a schedule
            "add 'standup every monday at 9:30' to notes.txt": ""}  # quoted content
    assert {r: cron_of(r) for r in said} == said
    def declared(name: str, *keys: str) -> ToolDeclaration:  # as adjutant-tasks declares
        return ToolDeclaration(name=name, version="1", description=name, args_schema={
            "type": "object", "properties": {k: {"type": "string"} for k in keys}})

    tools = {"schedule.task": declared("schedule.task", "capability", "at", "cron"),
             "doc.summarize": declared("doc.summarize"), "fs.read": TOOLS["fs.read"]}
    got = scheduled_as_said(plan(("schedule.task", {"capability": "summarize",
                                                    "at": "09:00", "cron": "0 9 * * *"})),
                            "summarize the PDFs here every Monday at 9am", tools)
    assert got == plan(("schedule.task", {"capability": "doc.summarize", "cron": "0 9 * * 1"}))
    once = plan(("schedule.task", {"capability": "doc.summarize", "at": "2026-12-24T08:00"}))
    assert scheduled_as_said(once, "on 2026-12-24 at 08:00 summarize the PDFs", tools) == once
    guessed = plan(("schedule.task", {"capability": "doc.summarize", "at": "1 December 9 AM"}))
    assert scheduled_as_said(guessed, "On 1 December 2026 at 9 in the morning, summarize the "
                             "pdfs.", tools) == plan(("schedule.task", {
                                 "capability": "doc.summarize", "at": "2026-12-01T09:00:00"}))


def test_a_time_of_day_in_words_and_a_date_in_words_are_read() -> None:
    """heldout17 and heldout18 said "8 in the morning" and "On 1 December 2026": the
    schedule had no cron, or a one-off time the model made up."""
    from datetime import datetime

    from adjutant.operator._when import at_of, cron_of

    assert cron_of("Every Monday at 8 in the morning summarize the pdfs") == "0 8 * * 1"
    assert cron_of("every day at 9 at night zip the logs") == "0 21 * * *"
    assert cron_of("every friday at 6 in the evening zip the logs") == "0 18 * * 5"
    now = datetime(2026, 11, 30, 15, 0)
    said = {"On 1 December 2026 at 9 in the morning, summarize the pdfs.": "2026-12-01T09:00:00",
            "tomorrow at 8pm zip the logs": "2026-12-01T20:00:00",
            "on December 5th at 6 in the evening zip the logs": "2026-12-05T18:00:00",
            "on the 3rd of March at 7:30 summarize the pdfs": "2027-03-03T07:30:00",
            "on 31 February 2027 at 9 zip src": "",  # no such day: the model's to say
            "what happened on 1 December 2026 at 9?": "",  # a question
            "zip the logs": ""}
    assert {r: at_of(r, now) for r in said} == said


def test_an_hour_said_in_words_is_the_schedules_cron() -> None:
    """heldout38, after its run: "every Monday at seven in the morning, run
    doc.summarize - set that up as a scheduled task" had no cron (the hour in words)."""
    from adjutant.operator._stated import settled_values

    tools = {name: ToolDeclaration(name=name, version="1", description=name, args_schema={
        "type": "object", "properties": {k: {"type": "string"} for k in keys}})
        for name, keys in (("schedule.task", ("capability", "at", "cron")),
                           ("doc.summarize", ()))}  # as adjutant-tasks declares them
    got = settled_values(plan(("schedule.task", {"capability": "doc.summarize"})),
                         "every Monday at seven in the morning, run doc.summarize - set "
                         "that up as a scheduled task", "", tools)
    assert got == plan(("schedule.task", {"capability": "doc.summarize", "cron": "0 7 * * 1"}))


def test_a_day_the_calendar_lacks_is_said_never_scheduled_now() -> None:
    """"on 31 February 2027 at 9 summarize the pdfs" had been scheduled with no time,
    to run at once (the user's trial, stop 47): the answer says there is no such day."""
    from adjutant.operator._when import no_such_day, scheduled_as_said
    from adjutant_hookspecs import Response

    assert no_such_day("on 31 February 2027 at 9 summarize the pdfs") == "31 February 2027"
    assert no_such_day("on 1 December 2026 at 9 summarize the pdfs") == ""
    assert no_such_day("add 'on 31 February at 9' to notes.txt") == ""  # quoted
    tools = {"schedule.task": ToolDeclaration(
        name="schedule.task", version="1", description="schedule", args_schema={
            "type": "object", "properties": {"capability": {"type": "string"},
                                             "at": {"type": "string"}}})}
    got = scheduled_as_said(plan(("schedule.task", {"capability": "schedule.task"})),
                            "on 31 February 2027 at 9 summarize the pdfs", tools)
    assert isinstance(got, Response) and "no 31 February 2027" in got.text


def test_a_search_of_a_folder_named_first_searches_it_for_what_follows(tmp_path: Path) -> None:
    """"grep src for todo" had searched for "src" everywhere."""
    from adjutant.operator._values import searched_for

    (tmp_path / "src").mkdir()
    got = searched_for(plan(("search.grep", {"pattern": "src", "ignore_case": True})),
                       "grep src for todo, case insensitive", TOOLS, str(tmp_path))
    assert got == plan(("search.grep", {"pattern": "todo", "ignore_case": True,
                                        "paths": ["src"]}))
    elsewhere = plan(("search.grep", {"pattern": "lib"}))  # no folder lib here
    assert searched_for(elsewhere, "grep lib for todo", TOOLS, str(tmp_path)) == plan(
        ("search.grep", {"pattern": "todo"}))


def test_text_written_to_a_folder_goes_to_the_file_in_it_called_by_name(
        tmp_path: Path) -> None:
    """"tack this onto the end of the guide in docs: ..." had appended to "docs"."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n")
    appended = plan(("fs.append", {"path": "docs", "content": "Tests run with pytest.\n"}))
    asked = "tack this onto the end of the guide in docs: Tests run with pytest."
    assert paths_as_named(appended, asked, TOOLS, str(tmp_path)) == plan(
        ("fs.append", {"path": "docs/guide.md", "content": "Tests run with pytest.\n"}))
    listed = plan(("fs.list", {"path": "docs"}))  # a folder listed stays one
    assert paths_as_named(listed, "list the guide in docs", TOOLS, str(tmp_path)) == listed


def test_lines_carried_after_a_colon_are_written_as_given() -> None:
    """"create X containing:" and lines of text had been written with a line of the
    model's own added ("Q: What is the default timezone?") or the first line dropped;
    "Q: Where ..." inside the text had been taken for the colon that opens it."""
    from adjutant.operator._values import without_more
    from adjutant.operator._words import carried_text

    faq = ("Create docs/faq.md containing exactly:\n# FAQ\n\nQ: Where are the settings?\n"
           "A: In config.")
    assert carried_text(faq) == "# FAQ\n\nQ: Where are the settings?\nA: In config."
    test = ("create tests/test_a.py containing:\nfrom src.util import average\n\n\n"
            "def test_two():\n    assert average([1, 3]) == 2\nthen commit it as 'add test'")
    lines = "from src.util import average\n\n\ndef test_two():\n    assert average([1, 3]) == 2"
    assert carried_text(test) == lines  # less the line ordering the next step
    dropped = plan(("fs.write", {"path": "tests/test_a.py",
                                 "content": "def test_two():\n    assert average([1, 3]) == 2\n"}))
    assert without_more(dropped, carried_text(test), TOOLS) == plan(
        ("fs.write", {"path": "tests/test_a.py", "content": lines + "\n"}))
    other = plan(("fs.write", {"path": "tests/test_a.py", "content": "print('hi')\n"}))
    assert without_more(other, carried_text(test), TOOLS) == other  # no line of it: kept
    assert carried_text("notes:\nbuy milk") == ""  # two words before the colon


def test_text_run_on_past_what_is_carried_is_cut_back_to_it() -> None:
    """heldout38, after its run: "replace the project notes entirely with: Tests run
    with pytest from the repository root." had been kept with the full stop left out and
    "End." of the model's own after it."""
    from adjutant.operator._values import without_more

    said = "Tests run with pytest from the repository root."
    for wrote in (said + "\n\nEnd.", said[:-1] + "\n\nEnd."):
        got = without_more(plan(("fs.write", {"path": "a.md", "content": wrote})), said, TOOLS)
        assert got == plan(("fs.write", {"path": "a.md", "content": said + "\n"}))
    whole = plan(("fs.write", {"path": "a.md", "content": said[:-1]}))
    assert without_more(whole, said, TOOLS) == whole  # only its full stop left out: kept


def test_a_value_copied_up_to_a_quote_is_the_quote() -> None:
    """"commit all tracked changes as 'wip: typo fixes'" had the message "all tracked
    changes as 'wip: typo fixes'"; code holding a quote stays as written."""
    from adjutant.operator._values import quote_as_said

    asked = "New branch docs/typos, then on it commit all tracked changes as 'wip: typo fixes'."
    copied = plan(("git.commit", {"message": "all tracked changes as 'wip: typo fixes'",
                                  "all": True}))
    assert quote_as_said(copied, asked, TOOLS) == plan(
        ("git.commit", {"message": "wip: typo fixes", "all": True}))
    code = plan(("fs.write", {"path": "a.py", "content": "print('hi')"}))
    assert quote_as_said(code, "write print('hi') to a.py", TOOLS) == code
    own = plan(("git.commit", {"message": "tracked changes as 'wip'"}))  # not the request's
    assert quote_as_said(own, "commit as 'wip'", TOOLS) == own


def test_files_listed_by_their_kind_are_that_glob() -> None:
    """"list the python files under src" had listed every file (heldout16)."""
    from adjutant.operator._here import glob_of_kind

    assert glob_of_kind("list the python files under src and zip them") == "*.py"
    assert glob_of_kind("show all json files") == "*.json"
    assert glob_of_kind("list the files under src") == ""


def test_a_time_written_the_iso_way_with_seconds_is_when_it_runs() -> None:
    """"queue doc.summarize for 2026-12-24T06:00:00 ..." had kept a made-up daily cron
    beside it (heldout46, after its run): the time is read, the cron goes."""
    from datetime import datetime

    from adjutant.operator._when import at_of

    now = datetime(2026, 12, 1, 8, 0)
    assert at_of("queue doc.summarize for 2026-12-24T06:00:00 with the key x", now) == \
        "2026-12-24T06:00:00"
    assert at_of("queue the pdf summary to run at 2026-12-01T09:00", now) == \
        "2026-12-01T09:00:00"
    assert at_of("what changed since 2026-11-01T09:00?", now) == ""  # a question, not when

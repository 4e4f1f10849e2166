"""What a question is about as rules see it (`webclient.session.rules`): paths relative to the workspace, a
command from wherever the agent put it, the option a decision picks."""

from __future__ import annotations

from webclient.people.rules import PermissionFacts, Rule, decide, rule_from
from webclient.session.rules import facts_of, option_for
from webclient.viewmodel.content import Diff, Location, PermissionOption
from webclient.viewmodel.entries import PermissionPrompt, ToolCall

OPTIONS = [
    PermissionOption("a1", "Allow always", "allow_always"),
    PermissionOption("a0", "Allow", "allow_once"),
    PermissionOption("r1", "Reject always", "reject_always"),
]


def call(**fields: object) -> ToolCall:
    return ToolCall(seq=1, turn=1, tool_call_id="c", **fields)  # type: ignore[arg-type]


def test_paths_are_relative_to_the_workspace_and_outside_ones_stay_absolute() -> None:
    tool = call(
        kind="edit",
        locations=[Location("/w/src/a.py"), Location("/elsewhere/b.py"), Location("/w/../w2/c.py")],
        content=[Diff("/w/src/a.py", "x", "y")],
        raw_input={"file_path": "/w/docs/d.md"},
    )
    facts = facts_of(tool, PermissionPrompt("q1", OPTIONS), "/w", "demo", "s1")
    assert facts.paths == ("src/a.py", "/elsewhere/b.py", "/w/../w2/c.py", "docs/d.md")
    assert facts.tool_kind == "edit" and facts.command is None


def test_the_command_comes_from_the_input_or_the_question() -> None:
    prompt = PermissionPrompt("q1", OPTIONS)
    assert facts_of(call(raw_input={"command": ["git", "status"]}), prompt, "/w", None, "s").command == "git status"
    assert facts_of(call(raw_input={"command": " make "}), prompt, "/w", None, "s").command == "make"
    prompt.command = "rm -rf build"  # the v2 draft's command subject
    assert facts_of(call(), prompt, "/w", None, "s").command == "rm -rf build"


def test_a_command_given_as_argv_is_the_line_that_runs_it_so_a_deny_sees_a_shells_script() -> None:
    """``["bash", "-lc", "rm -rf build"]`` (as some agents report a command) is ``bash -lc 'rm -rf build'``, not
    ``bash -lc rm -rf build`` (whose script would be ``rm`` alone): an admin's ``rm *`` refuses it."""
    prompt = PermissionPrompt("q1", OPTIONS)
    facts = facts_of(
        call(kind="execute", raw_input={"command": ["bash", "-lc", "rm -rf build"]}), prompt, "/w", None, "s"
    )
    assert facts.command == "bash -lc 'rm -rf build'"
    deny = Rule(1, None, "deny", "execute", command_pattern="rm *")
    assert decide([deny], facts) == ("deny", deny)
    tests = Rule(2, "alice", "allow", "execute", command_pattern="pytest *")
    argv = ["pytest", "-k", "a; rm -rf ~"]  # one argument holding a ;: quoted, no second command
    assert decide([tests], facts_of(call(kind="execute", raw_input={"command": argv}), prompt, "/w", None, "s")) == (
        "allow",
        tests,
    )


def test_a_decision_picks_the_agents_once_option_else_always_else_none() -> None:
    prompt = PermissionPrompt("q1", OPTIONS)
    assert option_for(prompt, "allow") == "a0"
    assert option_for(prompt, "deny") == "r1"
    assert option_for(PermissionPrompt("q2", OPTIONS[:2]), "deny") is None  # answered cancelled


def test_a_card_button_makes_a_rule_of_the_question() -> None:
    one = PermissionFacts("edit", ("src/a.py",), workspace="/w", agent="demo", session_id="s1")
    rule = rule_from(one, "alice", "session")
    assert (rule.decision, rule.tool_kind, rule.path_pattern, rule.session_id, rule.workspace) == (
        "allow",
        "edit",
        "src/a.py",
        "s1",
        None,
    )
    several = PermissionFacts("edit", ("src/a/x.py", "src/a/y.py"), workspace="/w", agent="demo", session_id="s1")
    rule = rule_from(several, "alice", "workspace")
    assert (rule.path_pattern, rule.workspace, rule.agent, rule.session_id) == ("src/a/*", "/w", "demo", None)
    command = rule_from(PermissionFacts("execute", (), "make test", workspace="/w"), "alice", "workspace")
    assert (command.command_pattern, command.path_pattern) == ("make test", None)


def test_a_rule_made_of_a_question_takes_its_words_literally() -> None:
    made = rule_from(PermissionFacts("execute", (), "ls [ab]*", workspace="/w"), "alice", "workspace")
    assert made.matches(PermissionFacts("execute", (), "ls [ab]*", workspace="/w", agent=None))
    assert not made.matches(PermissionFacts("execute", (), "ls a-file", workspace="/w", agent=None))

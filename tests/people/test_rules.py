"""The rules' matching and precedence (`webclient.people.rules`): pure, so tested directly."""

from __future__ import annotations

from webclient.people.rules import PermissionFacts, Rule, RuleBook, decide

EDIT_SRC = PermissionFacts("edit", ("src/app.py",), workspace="/w", agent="demo", session_id="s1")
RUN_TESTS = PermissionFacts("execute", (), "pytest -q tests", workspace="/w", agent="demo", session_id="s1")


def rule(rule_id: int, decision: str, owner: str | None = "alice", **fields: str) -> Rule:
    return Rule(rule_id, owner, decision, **fields)  # type: ignore[arg-type]


def test_no_rule_matches_so_the_person_is_asked() -> None:
    assert decide([], EDIT_SRC) is None
    assert decide([rule(1, "allow", tool_kind="read")], EDIT_SRC) is None


def test_tool_kind_path_and_command_patterns_match() -> None:
    edit = rule(1, "allow", tool_kind="edit", path_pattern="src/**")
    assert decide([edit], EDIT_SRC) == ("allow", edit)
    assert decide([edit], PermissionFacts("edit", ("docs/a.md",))) is None
    assert decide([edit], PermissionFacts("edit", ())) is None  # a path pattern needs a path
    tests = rule(2, "allow", tool_kind="execute", command_pattern="pytest *")
    assert decide([tests], RUN_TESTS) == ("allow", tests)
    assert decide([tests], PermissionFacts("execute", (), "rm -rf /")) is None
    assert decide([tests], PermissionFacts("execute", ())) is None  # no command: no match


def test_an_allow_covers_every_path_a_deny_needs_one() -> None:
    both = PermissionFacts("edit", ("src/a.py", "secrets/key"))
    assert decide([rule(1, "allow", path_pattern="src/*")], both) is None
    deny = rule(2, "deny", path_pattern="secrets/*")
    assert decide([deny], both) == ("deny", deny)


def test_session_workspace_and_agent_limit_where_a_rule_holds() -> None:
    assert decide([rule(1, "allow", session_id="other")], EDIT_SRC) is None
    assert decide([rule(1, "allow", workspace="/elsewhere")], EDIT_SRC) is None
    assert decide([rule(1, "allow", agent="claude")], EDIT_SRC) is None
    here = rule(2, "allow", workspace="/w", agent="demo")
    assert decide([here], EDIT_SRC) == ("allow", here)


def test_the_most_specific_of_a_persons_rules_wins() -> None:
    everywhere = rule(1, "deny", tool_kind="edit")
    workspace = rule(2, "ask", workspace="/w", agent="demo")
    session = rule(3, "allow", session_id="s1")
    assert decide([everywhere, workspace, session], EDIT_SRC) == ("allow", session)
    assert decide([everywhere, workspace], EDIT_SRC) == ("ask", workspace)
    assert decide([everywhere], EDIT_SRC) == ("deny", everywhere)


def test_equally_specific_the_strictest_wins() -> None:
    allow, deny = rule(1, "allow", path_pattern="src/*"), rule(2, "deny", path_pattern="src/app*")
    assert decide([allow, deny], EDIT_SRC) == ("deny", deny)


def test_an_admins_deny_beats_a_persons_allow() -> None:
    admin = rule(1, "deny", owner=None, tool_kind="execute")
    mine = rule(2, "allow", session_id="s1", command_pattern="pytest *")
    assert decide([admin, mine], RUN_TESTS) == ("deny", admin)


def test_an_admins_ask_cannot_become_allow() -> None:
    admin = rule(1, "ask", owner=None, tool_kind="edit")
    mine = rule(2, "allow", session_id="s1")
    assert decide([admin, mine], EDIT_SRC) == ("ask", admin)


def test_a_person_may_tighten_an_admins_allow() -> None:
    admin = rule(1, "allow", owner=None)
    assert decide([admin], EDIT_SRC) == ("allow", admin)
    ask, deny = rule(2, "ask", tool_kind="edit"), rule(3, "deny", path_pattern="src/*")
    assert decide([admin, ask], EDIT_SRC) == ("ask", ask)
    assert decide([admin, deny], EDIT_SRC) == ("deny", deny)


def test_a_rule_book_holds_each_persons_rules_apart() -> None:
    book = RuleBook([rule(1, "allow", owner="alice"), rule(2, "deny", owner="bob"), rule(3, "ask", owner=None)])
    assert [r.id for r in book.for_person("alice")] == [1, 3]
    assert [r.id for r in book.for_person(None)] == [3]
    assert book.decide("bob", EDIT_SRC) == ("deny", book.get(2))
    assert book.decide("alice", EDIT_SRC) == ("ask", book.get(3))  # the admin's ask holds
    book.remove(3)
    assert book.decide("alice", EDIT_SRC) == ("allow", book.get(1))
    assert book.decide("carol", EDIT_SRC) is None


def test_a_rule_says_what_and_where() -> None:
    assert rule(1, "allow", tool_kind="edit", path_pattern="src/**").what == "edit src/**"
    assert rule(1, "allow", command_pattern="git *").what == "any tool `git *`"
    assert rule(1, "allow").where == "everywhere"
    assert rule(1, "allow", workspace="/w", agent="demo").where == "in /w with demo"


def test_an_allow_with_a_relative_pattern_never_reaches_outside_the_workspace() -> None:
    anything = rule(1, "allow", path_pattern="*")
    assert decide([anything], PermissionFacts("edit", ("src/a.py",))) == ("allow", anything)
    assert decide([anything], PermissionFacts("edit", ("/etc/passwd",))) is None
    assert decide([anything], PermissionFacts("edit", ("../other/a.py",))) is None
    absolute = rule(2, "allow", path_pattern="/tmp/*")
    assert decide([absolute], PermissionFacts("edit", ("/tmp/scratch",))) == ("allow", absolute)
    refuse = rule(3, "deny", path_pattern="*")  # a deny reaches everywhere
    assert decide([refuse], PermissionFacts("edit", ("/etc/passwd",))) == ("deny", refuse)

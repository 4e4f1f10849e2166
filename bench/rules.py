"""Rules bench: what checking a person's permission rules costs per permission request, and that streamed chunks
never consult them.

Run by hand: ``.venv/bin/python bench/rules.py [--chunks N] [--questions N]``.

1. **Per question**: the check a live question gets (`webclient.session.rules.facts_of` and
   `webclient.people.rules.RuleBook.decide`) with 0, 10, 1,000 and 10,000 rules on the server (a quarter the
   asking person's, a few the admins', the rest other people's; none matches, the worst case: every rule is read),
   for an edit of three files, a command and a compound command (``cd /w && FOO=1 pytest -q tests/unit 2>&1 |
   tail -50``, read into its three commands). µs per question, median of 5 runs.
2. **Per chunk**: a real `Session` with its real ACP adapter (`AcpAgent`, no process: the agent's messages are handed
   to it as its connection would) takes ``--chunks`` ``agent_message_chunk`` updates with no rules and with 1,000
   rules (and a rule book that counts its decisions), then ``--questions`` permission requests: the rule book is
   consulted once per question and zero times for all the chunks, and the chunks take the same time either way.
3. **Over the wire** (``--server``): the real server (``bench/flood.py``'s run: its flood agent, 100,000 chunks and
   10,000 tool call updates, read over the page's web socket) with no rules and with 1,000 in its store (a quarter
   the session owner's), interleaved: notifications per second.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # flood.py, for --server

from webclient.people.person import LOCAL  # noqa: E402
from webclient.people.rules import Decision, PermissionFacts, Rule, RuleBook  # noqa: E402
from webclient.session.agent_entry import AgentEntry  # noqa: E402
from webclient.session.agent_spec import AgentSpec  # noqa: E402
from webclient.session.core import Session  # noqa: E402
from webclient.session.rules import facts_of  # noqa: E402
from webclient.viewmodel.content import Location, PermissionOption  # noqa: E402
from webclient.viewmodel.entries import PermissionPrompt, ToolCall  # noqa: E402
from webclient.web.app import agent_driver  # noqa: E402

PERSON = "alice"
KINDS = ("read", "edit", "execute", "search", "fetch", "delete")
DECISIONS: tuple[Decision, ...] = ("allow", "deny", "ask")


def rules(count: int) -> list[Rule]:
    """``count`` rules none of which matches the bench's questions (so that each is read)."""
    made = []
    for number in range(count):
        owner = None if number % 50 == 0 else PERSON if number % 4 == 0 else f"person-{number % 97}"
        kind = KINDS[number % len(KINDS)]
        decision = DECISIONS[number % 3]
        if kind == "execute":
            made.append(Rule(number + 1, owner, decision, kind, command_pattern=f"tool-{number} *"))
        else:
            made.append(Rule(number + 1, owner, decision, kind, path_pattern=f"area-{number}/**"))
    return made


class CountingBook(RuleBook):
    decisions = 0

    def decide(self, person_id: str | None, facts: PermissionFacts) -> Any:
        self.decisions += 1
        return super().decide(person_id, facts)


COMMANDS = {"execute": "pytest -q tests/unit", "compound": "cd /w && FOO=1 pytest -q tests/unit 2>&1 | tail -50"}
"""The bench's command lines: a plain one, and one of three commands (read into each before rules match it)."""


def question(kind: str) -> tuple[ToolCall, PermissionPrompt]:
    call = ToolCall(seq=1, turn=1, tool_call_id="c1", kind="execute" if kind in COMMANDS else kind, title="bench")
    if kind in COMMANDS:
        call.raw_input = {"command": COMMANDS[kind]}
    else:
        call.locations = [Location(f"/w/src/module_{n}.py") for n in range(3)]
    return call, PermissionPrompt("q1", [PermissionOption("allow", "Allow", "allow_once")])


def per_question(count: int, kind: str, repeat: int = 2000) -> float:
    """µs for one question's check with ``count`` rules on the server (median of 5 runs of ``repeat``)."""
    book = RuleBook(rules(count))
    call, prompt = question(kind)
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeat):
            book.decide(PERSON, facts_of(call, prompt, "/w", "demo", "s1"))
        runs.append((time.perf_counter() - started) / repeat * 1e6)
    return statistics.median(runs)


def chunk(text: str) -> dict[str, Any]:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return {"sessionId": "bench", "update": update}


async def flood(
    book: CountingBook | None, chunks: int, questions: int, workspace: Path
) -> tuple[float, float, int, int]:
    """Seconds for ``chunks`` chunks, µs per question, and how often the rule book was consulted for the chunks and
    for the questions."""
    session = Session(AgentSpec(AgentEntry("agent", ["unused"]), workspace), agent_driver)
    session.owner = PERSON
    session.rules.book, session.rules.agent = book, "demo"
    agent: Any = session.agent
    agent.known_session_id = "bench"
    session.thread.start_turn([])
    started = time.perf_counter()
    for number in range(chunks):
        agent.on_session_update(chunk(f"w{number} "))
    streamed = time.perf_counter() - started
    during_chunks = book.decisions if book is not None else 0
    started = time.perf_counter()
    for number in range(questions):
        tool_call = {"toolCallId": f"e{number}", "kind": "edit", "locations": [{"path": str(workspace / "src/a.py")}]}
        options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
        agent.on_request_permission({"sessionId": "bench", "toolCall": tool_call, "options": options})
    asked = (time.perf_counter() - started) / max(questions, 1) * 1e6
    session.agent.questions.settle()  # type: ignore[attr-defined]
    return streamed, asked, during_chunks, (book.decisions if book is not None else 0) - during_chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--server", action="store_true", help="also time the real server's flood (about a minute)")
    parser.add_argument("--runs", type=int, default=3, help="--server: runs of each (medians are shown)")
    args = parser.parse_args()

    print("1. The rule check per permission question (µs, median of 5; no rule matches: every rule is read)")
    print(f"   {'rules on the server':>20} {'edit of 3 files':>16} {'a command':>10} {'a compound command':>19}")
    for count in (0, 10, 1_000, 10_000):
        timed = [per_question(count, kind) for kind in ("edit", "execute", "compound")]
        print(f"   {count:>20,} {timed[0]:>16.1f} {timed[1]:>10.1f} {timed[2]:>19.1f}")

    print(f"\n2. A real session (ACP adapter, no process): {args.chunks:,} chunks streamed, {args.questions} questions")
    books: dict[str, CountingBook | None] = {"no rules": None, "1,000 rules": CountingBook(rules(1_000))}
    runs: dict[str, list[tuple[float, float, int, int]]] = {label: [] for label in books}
    with tempfile.TemporaryDirectory() as folder:
        for number in range(6):  # interleaved, each first in turn, so that neither gets the warmer process
            for label, book in sorted(books.items(), reverse=number % 2 == 1):
                if book is not None:
                    book.decisions = 0
                runs[label].append(asyncio.run(flood(book, args.chunks, args.questions, Path(folder))))
    print(f"   {'':>12} {'µs/chunk: min':>13} {'median':>7} {'checks':>7} {'µs/question':>12} {'checks':>7}")
    for label, done in runs.items():
        per_chunk = [run[0] / args.chunks * 1e6 for run in done]
        asked = statistics.median(run[1] for run in done)
        chunk_checks, question_checks = done[-1][2], done[-1][3]
        print(
            f"   {label:>12} {min(per_chunk):>13.2f} {statistics.median(per_chunk):>7.2f} {chunk_checks:>7}"
            f" {asked:>12.1f} {question_checks:>7}"
        )
    print("   (6 interleaved runs; checks: how often the rule book was consulted, in the last run; on a shared machine")
    print("   the spread between runs is larger than any difference between the rows)")
    if args.server:
        asyncio.run(over_the_wire(args.runs))


async def seeded(data: Path, count: int) -> None:
    """A store in ``data`` holding ``count`` rules, a quarter of them token mode's one person's (the sessions')."""
    from webclient.store import rules as stored
    from webclient.store.store import Store

    data.mkdir(parents=True, exist_ok=True)
    store = await Store.open_url(f"sqlite+aiosqlite:///{data / 'webclient.sqlite3'}")
    try:
        for rule in rules(count):
            owner = LOCAL.id if rule.owner == PERSON else rule.owner
            await stored.add(
                store.engine,
                Rule(0, owner, rule.decision, rule.tool_kind, rule.path_pattern, rule.command_pattern),
                "bench",
            )
    finally:
        await store.close()


async def over_the_wire(runs: int) -> None:
    import flood

    options = argparse.Namespace(
        messages=100_000,
        updates=10_000,
        tool_calls=20,
        seed=1,
        rate=0,
        no_deflate=False,
        no_store=False,
        quiet=0.5,
        save_frames=None,
        server_root=None,
        profile=None,
        only="server",
        runs=runs,
        timeout=600,
    )
    rates: dict[int, list[float]] = {0: [], 1_000: []}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for run in range(2 * runs):
            count = 1_000 if run % 2 else 0
            await seeded(tmp / f"data-{run}", count)
            result = await flood.bench_server(options, tmp, run)
            rates[count].append(result.rate)
    print("\n3. The real server, 100,000 chunks and 10,000 tool call updates over its web socket (notifications/s)")
    for count, measured in rates.items():
        each = ", ".join(f"{rate:,.0f}" for rate in measured)
        print(f"   {count:>6,} rules: {statistics.median(measured):>9,.0f}  (runs: {each})")


if __name__ == "__main__":
    main()

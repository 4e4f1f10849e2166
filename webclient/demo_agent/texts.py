"""Canned Markdown the scenarios stream. Kept apart so the scenario code stays about *behaviour*."""

from __future__ import annotations

MARKDOWN_THOUGHT = (
    "The user wants to see how Markdown renders. I'll cover headings, a list, a table, inline code, "
    "a link and two fenced code blocks (Python and Bash), so every renderer path gets exercised."
)

MARKDOWN_ANSWER = """\
## Markdown showcase

Here is a quick tour of what the client renders. Text can be **bold**, *italic* or `inline code`, and
links like [the ACP specification](https://agentclientprotocol.com) work too.

### A list

- Streaming arrives in small chunks, a few words at a time.
- Code blocks are highlighted once the closing fence arrives.
- Tables, quotes and nested items:
  - like this one.

> Tip: type `help` to see every scenario.

### A table

| Scenario | Shows |
|---|---|
| `plan` | a plan advancing entry by entry |
| `tools` | every tool-call kind |
| `edit` | a permission request and a real file edit |
| `run` | the tests, run in a terminal of the client |

### Python

```python
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ValueError("cannot divide by zero")
    return a / b
```

### Bash

```bash
python -m venv .venv && . .venv/bin/activate
pytest -q tests/
```

That's it — headings, lists, a table, code, and a link.
"""

SLOW_TEXT = """\
## A slow answer

This answer streams deliberately slowly, so you have time to press **Stop** and watch the turn end
with the reason `cancelled`. When you cancel, the agent notices between two chunks, stops writing at
once, and answers the pending prompt request with that stop reason.

Meanwhile, a few words about the protocol. The Agent Client Protocol lets an editor or a browser talk
to a coding agent over JSON-RPC. The client starts the agent as a subprocess and speaks newline-delimited
JSON over its standard input and output. A prompt turn begins with `session/prompt`, and the request stays
open for the whole turn while the agent streams `session/update` notifications: message chunks, thoughts,
tool calls, plans and more.

When the agent wants to do something risky, such as editing a file, it asks first with
`session/request_permission` and waits for the answer. Cancelling a turn is a notification,
`session/cancel`; the client answers every open permission request with the `cancelled` outcome, and the
agent wraps up and replies with `stopReason: "cancelled"`.

If you are still reading, the Stop button is right there. Otherwise this answer simply finishes, and the
turn ends normally with `end_turn`.
"""

TOUR_THOUGHT = "A quick tour: some Markdown, a plan, a couple of tools, an edit that needs permission, a test run."

TOUR_INTRO = """\
Hi! I'm the **demo agent**: I run locally, need no API key, and show what this client can render.
Here's a tiny taste of code:

```python
from calculator import divide
print(divide(10, 4))  # 2.5
```

Let me work through a small plan on the sample project.

"""

TOUR_SUMMARY = """\
### Summary

- Read `{target}` and followed along to the `divide()` function.
- Searched the workspace for `TODO` comments.
- Proposed an edit and asked you first.
- {ran}.

Type `help` to see every scenario (for example `tools`, `markdown`, `plan`, `edit`, `run`, `slow`).
"""

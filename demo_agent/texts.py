"""Canned Markdown the scenarios stream. Kept apart so the scenario code stays about *behaviour*."""

from __future__ import annotations

MARKDOWN_THOUGHT = (
    "The user wants to see how Markdown renders. One long answer should cover it: headings at three levels, "
    "ordered and nested lists, a table with aligned columns, a blockquote, links, inline code, and fenced code "
    "in several languages (Python, TypeScript, Rust, JSON, Bash, a diff), so every renderer path gets exercised."
)

MARKDOWN_ANSWER = """\
## Markdown showcase

Here is one long answer with everything the client renders. Text can be **bold**, *italic*, ~~struck~~ or
`inline code`, and links like [the ACP specification](https://agentclientprotocol.com) or
[its content blocks](https://agentclientprotocol.com/protocol/content) work too.

### Lists

- Streaming arrives in small chunks, a few words at a time.
- Code blocks are highlighted as they stream.
- Lists nest:
  - like this one,
  - and this one, with `code` inside.

1. Read the file.
2. Propose a change.
3. Ask first, then write it.

> **Tip:** type `help` to see every scenario, or `/` in the prompt box for the command menu.
>
> Quotes can span several paragraphs.

### A table

| Scenario | Shows | Needs |
|---|---|:---:|
| `plan` | a plan advancing entry by entry | — |
| `tools` | every tool-call kind | — |
| `edit` | a permission request and a real file edit | `fs/*` optional |
| `run` | the tests, run in a terminal of the client | `terminal/*` optional |
| `media` | images, audio and resources | — |

### Code in several languages

#### Python

```python
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ValueError("cannot divide by zero")
    return a / b
```

#### TypeScript

```typescript
type StopReason = "end_turn" | "max_tokens" | "refusal" | "cancelled";

function describe(reason: StopReason): string {
  return reason === "cancelled" ? "You stopped me." : `Turn ended: ${reason}`;
}
```

#### Rust

```rust
fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}
```

#### JSON

```json
{
  "jsonrpc": "2.0",
  "method": "session/update",
  "params": {"sessionId": "demo", "update": {"sessionUpdate": "usage_update", "used": 5120, "size": 200000}}
}
```

#### Bash

```bash
python -m venv .venv && . .venv/bin/activate
pytest -q tests/
```

#### A diff

```diff
 def divide(a: float, b: float) -> float:
-    # TODO: give a friendlier error than ZeroDivisionError when b is 0
+    if b == 0:
+        raise ValueError("cannot divide by zero")
     return a / b
```

---

That's it — headings, lists, a quote, a table, code in six languages, and links.
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
- {edited}.
- {ran}.

Type `help` to see every scenario (for example `tools`, `markdown`, `media`, `modes`, `edit`, `run`, `slow`).
"""

PLAN_THOUGHT = (
    "Before touching anything I should know what is there. The calculator has TODOs; a plan with four steps "
    "keeps it small: read, find the TODOs, sketch a test, summarise."
)

MEDIA_THOUGHT = (
    "Time to show every content block. I'll draw a small bar chart as a PNG, synthesise a short chime as a WAV, "
    "and link and embed a couple of workspace files, plus one web link."
)

MEDIA_OUTRO = """
Images show inline, audio plays, and the links open the file or the page. Now try it the other way round:
attach an image, a sound or a file to your next prompt (or `@`-mention a workspace file), and I'll tell you
exactly what arrived.
"""

MODES_THOUGHT = (
    "The user asks about modes and settings. I'll show the current values in a table, say what each one "
    "changes in this demo, and how to change them."
)

MODES_EFFECTS = """\
What they change here:

- **Mode** — `edit` (and the tour) ask before writing in *Ask* mode, write straight away in *Code* mode,
  and only describe the change in *Plan* mode.
- **Model** — how many words arrive per chunk (Fast models send bigger chunks), and what the usage meter charges.
- **Thinking** — whether and how much I think (the thoughts you can fold away) before answering.
{verbose}
Change them with your client's selectors (`session/set_mode`, `session/set_config_option`), or type
`modes code` (or `ask`, `plan`) to have me switch mode myself (`current_mode_update`).
"""

VERBOSE_ON = "- **Verbose** — one closing sentence that explains what I just did.\n"
VERBOSE_OFF = (
    "- **Verbose** — your client did not advertise `session.configOptions.boolean`, so I don't offer this toggle.\n"
)

REPLAY_INTRO = """\
Below, an earlier conversation is replayed the way an agent replays a session for `session/load`: your
messages come back as `user_message_chunk`, mine as thought and message chunks, each message with its own
`messageId`.
"""

# An earlier conversation: (who, text). "user" parts may name a workspace file as "@rel", sent as a resource_link.
REPLAY: list[tuple[str, str]] = [
    ("user", "What happens in @src/calculator.py when I divide by zero?"),
    ("thought", "The user wants to know about dividing by zero. `divide()` just returns `a / b`."),
    (
        "agent",
        "`divide(a, 0)` raises Python's own `ZeroDivisionError`: the function has no check yet, only a TODO "
        "asking for a friendlier error.",
    ),
    ("user", "Can you make it raise a ValueError instead?"),
    (
        "agent",
        'Sure — I\'d add `if b == 0: raise ValueError("cannot divide by zero")` before the division. '
        "Type `edit` and I'll propose exactly that.",
    ),
]

REPLAY_OUTRO = "\n*(End of the replay: everything above came from me, including your messages.)*\n"

"""Back to before a prompt: a checkpoint of the workspace is taken before each prompt goes to the agent, and a person
may restore it ("Restore files to before this") or restore it and send an edited prompt instead ("Edit and resend").

The folder's first snapshot is taken in the background as the agent starts (`prepare`), so that a prompt's own, in
a thread while the prompt waits, reads only what changed since the one before (at most the store's ``timeout``,
``WEBCLIENT_CHECKPOINT_SECONDS``; else it goes with a notice "No checkpoint"). Each checkpoint's tree is journalled
(a session event ``checkpoint``) right after the prompt it precedes, so a rebuilt session offers Restore on the same
messages. Restores and resends are the person's actions (`webclient.session.attribution.record_action`), shown on the
thread as notices that a rebuild shows again; a resend's notice is the branch point, and what came before it stays on
the thread.

An edited prompt continues the conversation in a fork of the agent's session when the agent offers
``session/fork``, else in a new agent session, which starts without the later context (optionally told a short
summary of the turns before the branch point in its first prompt).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from webclient.session.agent import AgentDriver, AgentError
from webclient.session.agent_lifecycle import AgentLifecycle
from webclient.session.attribution import Actor, record_action
from webclient.session.prompt_queue import PromptRefused
from webclient.session.recorder import SESSION, Recorder
from webclient.session.shown import Shown
from webclient.session.tasks import BackgroundTasks
from webclient.session.turns import Turns
from webclient.viewmodel.entries import MessageEntry
from webclient.viewmodel.thread import Thread
from webclient.workspace.checkpoint_git import CheckpointFailed, CheckpointTooSlow
from webclient.workspace.checkpoints import CheckpointStore, FileChange, Restored
from webclient.workspace.paths import Workspace

log = logging.getLogger(__name__)

SUMMARY_CHARS = 4000
"""Characters of the earlier turns' summary a new agent session is given at most (the latest turns are kept)."""
PROMPT_CHARS, REPLY_CHARS = 600, 1200
"""Characters of each earlier prompt, and of the agent's last message of its turn, in the summary."""
NAMED = 8
"""Files a restore's notice names; the rest are counted."""

NO_CHECKPOINT = "No checkpoint"
BUSY = "The agent is working: wait for the turn to end, or stop it, before restoring files."
"""Why a restore is refused during a turn (the page's buttons say so while one runs: static/js/checkpoints.js)."""
BRANCH_POINT = "Branch point"


class Submit(Protocol):
    """Sends a prompt as the person's own, or queues it (`webclient.session.core.Session.submit_prompt`)."""

    def __call__(self, text: str, nonce: str, *, by: Actor = None) -> bool: ...


@dataclass(frozen=True)
class Checkpoint:
    """The workspace as it was before one prompt: its tree in the session's store, and how many files the snapshot
    left out (too big, binary, another repository)."""

    tree: str
    skipped: int = 0


class Checkpoints:
    """A session's checkpoints by the entry of the prompt each precedes, and the person's restores and resends."""

    def __init__(self, turns: Turns, recorder: Recorder, submit: Submit) -> None:
        self.turns = turns
        self.thread: Thread = turns.thread
        self.shown: Shown = turns.shown
        self.workspace: Workspace = turns.workspace
        self.lifecycle: AgentLifecycle = turns.lifecycle
        self.agent: AgentDriver = turns.agent
        self.tasks: BackgroundTasks = turns.tasks
        self.recorder = recorder
        self.submit = submit
        """Sends a prompt as the person's own (`webclient.session.core.Session.submit_prompt`)."""
        turns.before_prompt = self.before_prompt  # each prompt waits for its checkpoint
        self.store: CheckpointStore | None = None
        """Where the snapshots go; None: checkpoints are off (no data folder, or turned off)."""
        self.by_entry: dict[int, Checkpoint] = {}
        """The checkpoint taken before each prompt, by the seq of the prompt's entry on the thread."""
        self.restoring = False
        """A restore runs (in a thread): another is refused meanwhile."""
        self.given_up = False
        """A snapshot took too long: no more are taken (until the session is opened again)."""
        self.preparing: asyncio.Task[None] | None = None
        """The snapshot taken as the agent starts (`prepare`), while it runs."""

    # -- before each prompt ------------------------------------------------------------------------

    def prepare(self) -> None:
        """Snapshot the folder in the background as the agent starts: the first prompt's checkpoint then reads only
        what changed since (or waits for the rest of it). Its tree is no checkpoint: only a prompt's is journalled."""
        store = self.store
        if store is None or self.given_up or (self.preparing is not None and not self.preparing.done()):
            return
        self.preparing = self.tasks.spawn(self._prepare(store), "checkpoint")

    async def _prepare(self, store: CheckpointStore) -> None:
        try:
            async with asyncio.timeout(store.timeout + 1):
                await asyncio.to_thread(store.snapshot)
        except (TimeoutError, CheckpointTooSlow):
            self._give_up(store)
        except (CheckpointFailed, OSError) as error:
            log.info("the first snapshot of %s failed (the first prompt's tries again): %s", store.work_tree, error)

    async def before_prompt(self) -> None:
        """Snapshot the workspace for the prompt just shown; the prompt waits, at most the store's ``timeout``. One
        that took too long turns checkpoints off for the session (a folder that big would hold up every prompt)."""
        store, entry = self.store, _latest_prompt(self.thread)
        if store is None or entry is None or self.given_up:
            return
        try:
            async with asyncio.timeout(store.timeout + 1):
                snapshot = await asyncio.to_thread(store.snapshot)
        except (TimeoutError, CheckpointTooSlow):
            self._give_up(store)
            return
        except (CheckpointFailed, OSError) as error:
            self.shown.notice("warning", NO_CHECKPOINT, str(error))
            return
        event = {"event": "checkpoint", "seq": entry.seq, "tree": snapshot.tree, "skipped": snapshot.skipped_count}
        self.recorder.record(SESSION, "session", json.dumps(event))
        self.again(event)

    def _give_up(self, store: CheckpointStore) -> None:
        if self.given_up:
            return
        self.given_up = True
        self.shown.notice(
            "warning",
            NO_CHECKPOINT,
            f"The snapshot of the folder took longer than {store.timeout:g} s (WEBCLIENT_CHECKPOINT_SECONDS): "
            "no more are taken in this session.",
        )

    def again(self, event: dict[str, Any]) -> None:
        """A ``checkpoint`` event, live or from the journal: it belongs to the latest prompt on the thread."""
        entry = _latest_prompt(self.thread)
        if entry is None:
            return
        self.by_entry[entry.seq] = Checkpoint(str(event["tree"]), int(event.get("skipped", 0)))
        self.thread.listener(entry.change)  # its buttons appear

    # -- what a restore would do -------------------------------------------------------------------

    def refusal(self, seq: int) -> str | None:
        """Why the checkpoint before entry ``seq`` may not be restored now, or None."""
        if self.store is None:
            return "Checkpoints are off on this server."
        if seq not in self.by_entry:
            return "No checkpoint was taken before this prompt."
        if self.turns.turn_running or self.turns.turn_state in ("running", "awaiting-permission"):
            return BUSY
        if self.restoring:
            return "A restore is under way."
        return None

    async def preview(self, seq: int) -> list[FileChange]:
        """What restoring the checkpoint before entry ``seq`` would change, file by file.

        Raises:
            CheckpointFailed: no such checkpoint, or git failed.
        """
        store, checkpoint = self.store, self.by_entry.get(seq)
        if store is None or checkpoint is None:
            raise CheckpointFailed("No checkpoint was taken before this prompt.")
        return await asyncio.to_thread(store.changes_since, checkpoint.tree)

    # -- the person's actions ----------------------------------------------------------------------

    def ask_restore(self, seq: int | None, by: Actor = None) -> None:
        """The person's Restore (from the page): refused at once with a notice, else done in the background."""
        refused = self.refusal(seq) if seq is not None else "No such prompt."
        if refused is not None or seq is None:
            self.shown.notice("warning", "Files not restored", refused or "")
            return
        self.tasks.spawn(self.restore(seq, by), "restore")

    def ask_resend(self, seq: int | None, text: str, nonce: str, summary: bool, by: Actor = None) -> None:
        """The person's Edit and resend (from the page): as `ask_restore`, then `resend`."""
        refused = self.refusal(seq) if seq is not None else "No such prompt."
        if refused is not None or seq is None:
            self.shown.notice("warning", "Not resent", refused or "")
            return
        self.tasks.spawn(self.resend(seq, text, nonce, summary, by), "resend")

    async def restore(self, seq: int, by: Actor = None) -> bool:
        """Put the files back as they were before the prompt of entry ``seq``; False (with a notice) when refused."""
        restored = await self._restore(seq, "restore", by)
        return restored is not None

    async def resend(self, seq: int, text: str, nonce: str, summary: bool = False, by: Actor = None) -> bool:
        """Restore the files to before entry ``seq``'s prompt, then send ``text`` in its place: in a fork of the
        agent's session when it offers one, else in a new one (``summary``: told the earlier turns)."""
        text = text.strip()
        fork = self.agent.can_fork and self.lifecycle.ready
        refused = "The edited prompt is empty." if not text else self.turns.queue.bounds.too_long(text)
        if refused is None and not self.lifecycle.ready and self.lifecycle.may_start is not None:
            refused = self.lifecycle.may_start()  # a new agent counts against its owner's limits, as a Resume
        if refused is not None:
            self.shown.notice("warning", "Not resent", refused)
            return False
        how = "fork" if fork else "new-session"
        if await self._restore(seq, "resend", by, how=how, summary=summary) is None:
            return False
        if fork:
            try:
                await self.agent.fork()
            except AgentError as error:
                self.shown.notice("warning", "The agent did not fork its session", str(error))
                fork = False
        if fork:
            self.shown.notice(
                "info",
                f"{BRANCH_POINT}: the conversation continues in a fork of the agent's session",
                "The files are as they were before the edited prompt; the earlier branch stays above.",
            )
        else:
            earlier = summary_before(self.thread, seq) if summary else ""
            self.shown.notice(
                "info",
                f"{BRANCH_POINT}: a new agent session, which starts without the later context",
                "It was told a summary of the turns before this point."
                if earlier
                else "The earlier branch stays above.",
            )
            text = f"{earlier}\n\n{text}" if earlier else text
            await self._new_agent_session()
        try:
            return self.submit(text, nonce, by=by)
        except PromptRefused:  # the summary made it too long: the notice says so, with the text to copy
            return False

    async def _restore(self, seq: int, action: str, by: Actor, **details: object) -> Restored | None:
        refused = self.refusal(seq)
        if refused is not None:
            self.shown.notice("warning", "Files not restored", refused)
            return None
        assert self.store is not None
        checkpoint = self.by_entry[seq]
        record_action(self.recorder, action, by, seq=seq, tree=checkpoint.tree, **details)
        self.restoring = True
        try:
            restored = await asyncio.to_thread(self.store.restore, checkpoint.tree, self.workspace)
        except (CheckpointFailed, OSError) as error:
            self.shown.notice("error", "Files not restored", str(error))
            return None
        finally:
            self.restoring = False
        self.shown.notice("info", "Files restored to before this prompt", _told(restored, checkpoint))
        return restored

    async def _new_agent_session(self) -> None:
        """A fresh agent session in place of the one the agent had (which stays the agent's, unresumed)."""
        await self.agent.close()
        self.agent.known_session_id = None
        self.lifecycle.closing = False
        self.lifecycle.sleeping = False
        self.lifecycle.agent_state = "starting"
        await self.lifecycle.start_agent()

    async def forget(self) -> None:
        """The session is deleted: its store goes with it."""
        store, self.store = self.store, None
        if store is not None:
            await asyncio.to_thread(store.delete)


def _latest_prompt(thread: Thread) -> MessageEntry | None:
    for entry in reversed(thread.latest(50)):
        if isinstance(entry, MessageEntry) and entry.kind == "user-message":
            return entry
    return None


def _told(restored: Restored, checkpoint: Checkpoint) -> str:
    lines = []
    for title, paths in (("Written back", restored.written), ("Deleted (made since)", restored.deleted)):
        if paths:
            more = f" and {len(paths) - NAMED} more" if len(paths) > NAMED else ""
            lines.append(f"{title}: {', '.join(paths[:NAMED])}{more}")
    lines += [f"Not touched: {path} ({why})" for path, why in restored.refused[:NAMED]]
    if checkpoint.skipped:
        lines.append(
            f"Not in the checkpoint, left as they are: {checkpoint.skipped} files (too big, binary or a repository)"
        )
    return "\n".join(lines) or "Nothing had changed."


def summary_before(thread: Thread, seq: int, limit: int = SUMMARY_CHARS) -> str:
    """The person's prompts before entry ``seq`` and the agent's last message of each of those turns, the latest
    first kept within ``limit`` characters: what a new agent session is told of the conversation so far."""
    turns: list[list[str]] = []
    for entry in thread:
        if entry.seq >= seq:
            break
        if isinstance(entry, MessageEntry) and entry.kind == "user-message":
            turns.append([_cut(entry.text, PROMPT_CHARS), ""])
        elif isinstance(entry, MessageEntry) and entry.kind == "agent-message" and turns and entry.text.strip():
            turns[-1][1] = _cut(entry.text, REPLY_CHARS)
    head = "Earlier in this conversation (a summary; what came after was undone):"
    kept: list[str] = []
    used = len(head)
    for prompt, reply in reversed(turns):
        part = f"The person: {prompt}" + (f"\nYou: {reply}" if reply else "")
        if used + len(part) + 2 > limit:
            break
        kept.insert(0, part)
        used += len(part) + 2
    return "\n\n".join([head, *kept]) if kept else ""


def _cut(text: str, chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"

"""ACP path bench: the CPU one notification costs from the agent's pipe to the thread, without a server.

Run by hand: ``.venv/bin/python bench/acp_path.py [--runs N] [--profile FILE]``.

The flood agent's turn (``flood_agent.build``: 100,000 ``agent_message_chunk`` + 20 ``tool_call`` + 10,000
``tool_call_update``) is fed in 256 KiB reads, as the pipe gives them, to a real `Peer` wired as the ACP
adapter wires it: every line to the session's `ProtocolLog`, every ``session/update`` through the session's
`SessionUpdates` into a `Thread` and `SessionControls` whose listener notes what changed (as the live view's
``mark`` does). Nothing renders and nothing is sent: the figure is the protocol layer's own cost, which the
flood bench mixes with rendering, web socket frames and a frame rate that follows the machine's load.
CPU time (``process_time``) of the read loop only; min and median of ``--runs``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from flood_agent import build

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webclient.acp.peer import Peer  # noqa: E402
from webclient.acp.protocol_log import ProtocolLog  # noqa: E402
from webclient.acp.updates import SessionUpdates  # noqa: E402
from webclient.viewmodel.controls import SessionControls  # noqa: E402
from webclient.viewmodel.thread import Thread  # noqa: E402

READ = 1 << 18


class NoWriter:
    """The agent's stdin: the read path writes nothing."""

    def write(self, data: bytes, /) -> None:
        pass

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False


async def no_request(method: str, params: Any) -> Any:
    raise AssertionError(f"the flood sends no requests, got {method}")


async def one_run(data: bytes, profile: cProfile.Profile | None) -> float:
    """CPU seconds the read loop took for the whole turn."""
    changed: dict[int | str, None] = {}
    thread = Thread(listener=changed.setdefault, max_entries=10_000)
    updates = SessionUpdates(thread, SessionControls(listener=changed.setdefault))
    log = ProtocolLog()

    def on_notification(method: str, params: Any) -> None:
        if method == "session/update" and isinstance(params, dict):
            updates.apply(params.get("update"))

    reader = asyncio.StreamReader(limit=1 << 30)
    peer = Peer(reader, NoWriter(), on_request=no_request, on_notification=on_notification, on_traffic=log.record)
    for start in range(0, len(data), READ):
        reader.feed_data(data[start : start + READ])
    reader.feed_eof()
    started = time.process_time()
    if profile is not None:
        profile.enable()
    await peer.run()
    if profile is not None:
        profile.disable()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--profile", help="profile one more run into FILE (cProfile)")
    args = parser.parse_args()
    lines, figures = build(100_000, 10_000, 20, 1)
    data = b"".join(lines)
    count = figures["notifications"]
    times = [asyncio.run(one_run(data, None)) for _ in range(args.runs)]
    per = sorted(t / count * 1e6 for t in times)
    print(
        f"{count:,} notifications, {len(data):,} bytes: min {min(per):.2f} µs, median {statistics.median(per):.2f} µs"
        f" a notification ({count / min(times):,.0f} / CPU second at best); runs: {', '.join(f'{p:.2f}' for p in per)}"
    )
    if args.profile:
        profile = cProfile.Profile()
        asyncio.run(one_run(data, profile))
        profile.dump_stats(args.profile)


if __name__ == "__main__":
    main()

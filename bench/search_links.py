"""Search-links bench: what a search costs on a long stored session, and what following one of its hits costs.

Run by hand: ``.venv/bin/python bench/search_links.py [--messages N] [--tool-calls N] [--updates N] [--query WORDS]
[--runs N] [--root DIR]``.

A server (``python -m webclient``, its store in a throw-away data folder) runs one turn of the flood agent
(``bench/flood_agent.py``; by default 100,000 message chunks and 10,000 tool-call updates of 20 tool calls: the
110,040-notification session) and stops. Then, ``--runs`` times, a fresh server starts on the same store (the
session is not live in it) and the bench times, over HTTP on the loopback:

* ``GET /?q=QUERY``: the index's search, with its hits and their links (nothing of the session is rebuilt);
* the first hit's link (``/sessions/ID?at=N`` on a server that links to entries, ``/sessions/ID`` before): the
  rebuild from the journal and the page around the entry; then the same link again (the page alone), and the
  session's own page (its end) for comparison.

``--root DIR`` runs the server of another checkout (e.g. a worktree of ``main``) with this bench, so two versions are
compared on the same machine in alternating runs (each fills its own store: their migrations differ).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import os
import re
import statistics
import tempfile
from pathlib import Path

from flood import ROOT, TOKEN  # bench/ is the script's folder, hence on sys.path
from long_open import serve
from reopen import fill, get

HIT = re.compile(r'<a href="([^"]+)" data-role="match">|<li><a href="(/sessions/[^"]+)">')
"""A hit's link in the index (this branch marks it; before, it was the row's link)."""


def first_hit(port: int, query: str) -> str:
    """The link of the search's first hit (without its fragment)."""
    import http.client

    from flood import AUTHORIZATION

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", f"/?q={query.replace(' ', '+')}", headers=AUTHORIZATION)
        page = connection.getresponse().read().decode()
    finally:
        connection.close()
    found = HIT.search(page)
    assert found is not None, "no hit"
    return html.unescape(found.group(1) or found.group(2)).split("#", 1)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--tool-calls", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=0)
    parser.add_argument("--query", default="throughput latency", help="the words searched for")
    parser.add_argument("--searches", type=int, default=5, help="searches timed per server")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server runs (default: this one)")
    args = parser.parse_args()
    root = args.root.resolve()
    os.chdir(ROOT)
    tmp = Path(tempfile.mkdtemp(prefix="search-links-bench-"))
    env = {**os.environ, "WEBCLIENT_TOKEN": TOKEN, "WEBCLIENT_DATA_DIR": str(tmp / "data"), "PYTHONPATH": str(root)}
    env.pop("WEBCLIENT_AGENT", None)
    session_id = asyncio.run(fill(args, env, tmp, root))  # the server measured writes its store: migrations differ
    query = f"/?q={args.query.replace(' ', '+')}"
    figures: dict[str, list[float]] = {"search": [], "hit (rebuild + page)": [], "hit again": [], "session's end": []}
    for run in range(args.runs):
        server, port = asyncio.run(serve(root, env, tmp / f"open-{run}.log"))
        try:
            searches = []
            for _ in range(args.searches):
                status, took, size = get(port, query)
                assert status == 200, status
                searches.append(took * 1000)
            link = first_hit(port, args.query)
            assert link.startswith(f"/sessions/{session_id}"), link
            status, rebuilt, hit_size = get(port, link)
            assert status == 200, status
            _, again, _ = get(port, link)
            _, end, end_size = get(port, f"/sessions/{session_id}")
            search = statistics.median(searches)
            figures["search"].append(search)
            figures["hit (rebuild + page)"].append(rebuilt * 1000)
            figures["hit again"].append(again * 1000)
            figures["session's end"].append(end * 1000)
            print(
                f"run {run + 1}: search {search:.1f} ms ({size / 1000:.0f} kB); {link}: first {rebuilt * 1000:.0f} ms, "
                f"again {again * 1000:.0f} ms ({hit_size / 1000:.0f} kB); the session's end {end * 1000:.0f} ms "
                f"({end_size / 1000:.0f} kB)"
            )
        finally:
            asyncio.run(server.stop())
    medians = ", ".join(f"{name} {statistics.median(values):.1f} ms" for name, values in figures.items())
    print(f"{root.name}: median of {args.runs}: {medians}")


if __name__ == "__main__":
    main()

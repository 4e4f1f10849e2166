"""What the tool-call cards cost in frames saved by ``bench/flood.py --save-frames FILE``: payload bytes by kind.

Run as ``.venv/bin/python bench/card_bytes.py FILE.1 [FILE.2 ...]`` (``--text-bytes``: the flood's text bytes, as
``flood.py`` printed them; the default is that of ``--messages 20000``). Each frame is cut into its top-level
out-of-band fragments, and each fragment about a tool-call card is counted as one of:

* **new cards**: a card the page did not hold, whole (inside the ``appended`` wrapper, or a window the page asked for);
* **whole cards**: a card the page held, sent again whole (its structure changed, or every update before issue 25);
* **parts**: a part of a card swapped or appended by id (``entry-N-head``, ``-title``, ``-item-K``, ``-locations``,
  ``-raw``; new items or locations), by part;

* **records**: the card records of a socket message of records (``webclient/web/live/card_updates.py``: a title, a
  status, an edit of an item's inner HTML), by kind (each with its separator);

and the collapsed raw JSON inside cards (``<div class="raw">``) is counted apart, with its ``&#34;`` escapes.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)\b[^>]*?(/?)>")
VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
CARD = re.compile(r'<article id="entry-\d+" class="entry tool-call.*?</article>', re.S)
RAW = re.compile(r'<div class="raw"[^>]*>.*?</div>', re.S)
PART = re.compile(r'^<\w+(?: class="[^"]*")? id="entry-\d+-(head|title|item|locations|raw)\b')
RECORD = "\x1e"
"""What a socket message of records (message edits, card records) starts with."""
CARD_RECORD = re.compile(r"([tsi])[0-9]+\x1f")
RECORD_KINDS = {"t": "record: title", "s": "record: status", "i": "record: item edit"}
APPEND = re.compile(r'^<div hx-swap-oob="beforeend:#entry-\d+-(content|locations)">')
CONTENT = re.compile(r'^<div hx-swap-oob="(?:beforebegin:#entry-\d+-raw|beforeend:#entry-\d+)">')
"""A card's content when it first has some."""


def fragments(frame: str) -> list[str]:
    """The top-level elements of a frame, in order."""
    found, depth, start = [], 0, 0
    for tag in TAG.finditer(frame):
        closing, name, self_closing = tag.groups()
        if name.lower() in VOID or self_closing:
            if depth == 0:
                found.append(frame[tag.start() : tag.end()])
            continue
        if closing:
            depth -= 1
            if depth == 0:
                found.append(frame[start : tag.end()])
        else:
            if depth == 0:
                start = tag.start()
            depth += 1
    return found


def classify(frames: list[str]) -> Counter[str]:
    sizes: Counter[str] = Counter()
    for frame in frames:
        sizes["all frames"] += len(frame.encode())
        if frame.startswith(RECORD):  # the edits of a streaming message's rest (message_edits.py), card records
            for record in frame.split(RECORD)[1:]:
                if (found := CARD_RECORD.match(record)) is not None:
                    sizes[RECORD_KINDS[found.group(1)]] += len(record.encode()) + 1
            continue
        for part in fragments(frame):
            size = len(part.encode())
            if part.startswith('<article id="entry-') and 'class="entry tool-call' in part[:120]:
                sizes["whole cards"] += size
                kind = "whole"
            elif (found := PART.match(part)) is not None:
                sizes[f"part: {found.group(1)}"] += size
                kind = "part"
            elif CONTENT.match(part) is not None:
                sizes["part: content (first)"] += size
                kind = "part"
            elif (found := APPEND.match(part)) is not None:
                sizes[f"part: new {found.group(1)}"] += size
                kind = "part"
            else:
                cards = sum(len(card.encode()) for card in CARD.findall(part))
                sizes["new cards"] += cards
                kind = "new" if cards else ""
            if kind:
                for raw in RAW.findall(part):
                    sizes["raw JSON in cards"] += len(raw.encode())
                    sizes["&#34; escapes in cards"] += raw.count("&#34;")
    sizes["tool-call cards, all"] = sum(
        size
        for name, size in sizes.items()
        if name in ("whole cards", "new cards") or name.startswith(("part:", "record:"))
    )
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="frames saved by bench/flood.py --save-frames")
    parser.add_argument(
        "--text-bytes",
        type=int,
        default=676_314,
        help="the flood's agent text bytes (default: --messages 20000 --seed 1)",
    )
    args = parser.parse_args()
    for path in args.files:
        frames = [json.loads(line)[1] for line in path.read_text().splitlines() if line.strip()]
        sizes = classify(frames)
        print(f"{path}: {len(frames)} frames")
        for name, size in sorted(sizes.items(), key=lambda item: -item[1]):
            per = f"{size / args.text_bytes:5.2f} B/text B" if "escapes" not in name else ""
            print(f"  {name:28} {size:>10,}  {per}")


if __name__ == "__main__":
    main()

"""``python -m demo_aap [--host 127.0.0.1] [--port 8765]``: the demo AAP server (``DEMO_AAP_DELAY`` seconds between
streamed pieces, ``DEMO_AAP_KEY`` to want a key)."""

from __future__ import annotations

import argparse

import uvicorn

from .server import app_from_env


def main() -> None:
    parser = argparse.ArgumentParser(prog="demo_aap", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    uvicorn.run(app_from_env(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()

"""Runs ``python -m webclient`` with cProfile off until SIGUSR1 and written out at SIGUSR2: the turn alone.

``bench/flood.py --profile FILE`` starts the server through this script and signals it around the turn, so start-up
(imports, migrations, compiling templates) stays out of the figures. Usage: ``profiled_server.py FILE ARGS...``.
"""

from __future__ import annotations

import cProfile
import signal
import sys
import time
from types import FrameType


def main() -> None:
    target, sys.argv = sys.argv[1], ["webclient", *sys.argv[2:]]
    # CPU time of the event loop's thread, not wall time: a wait for the interpreter's lock (another thread holds
    # it) would otherwise count against whatever the loop was doing.
    profile = cProfile.Profile(time.thread_time)

    def start(signum: int, frame: FrameType | None) -> None:
        profile.enable()

    def stop(signum: int, frame: FrameType | None) -> None:
        profile.disable()
        profile.dump_stats(target)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from webclient.cli import main as serve

    serve()


if __name__ == "__main__":
    main()

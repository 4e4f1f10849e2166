"""Raw JSON test agent that will not leave: ignores stdin EOF and SIGTERM, and has a child of its own.

It starts ``sleep 60`` (which inherits the ignored SIGTERM), announces both pids in one notification
``started`` {pid, child}, and then sleeps until SIGKILLed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the child across exec
child = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
message = {"jsonrpc": "2.0", "method": "started", "params": {"pid": os.getpid(), "child": child.pid}}
sys.stdout.write(json.dumps(message) + "\n")
sys.stdout.flush()
sys.stdin.read()  # returns at EOF; we stay anyway
while True:
    time.sleep(60)

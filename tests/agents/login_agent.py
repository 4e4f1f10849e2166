"""A raw-JSON ACP agent that signs in only through a ``terminal`` method, and that method's own login program.

Run as ``login_agent.py ... --login`` (the method's ``args``): a tiny interactive login on the terminal. It says
whether stdin is a tty, asks for a code, and on ``4242`` writes the token file into ``$LOGIN_TOKEN_DIR`` and exits
0; another code exits 3. Each run appends what it was started with (argv, ``LOGIN_VIA`` from the method's ``env``,
cwd, pid, process group, whether stdin is a tty) to ``$LOGIN_TOKEN_DIR/runs.jsonl``, and starts a ``sleep`` in its
process group, so tests can see that the whole group is stopped.

Run otherwise: an agent. ``initialize`` offers the terminal method only if the client advertised
``clientCapabilities.auth.terminal`` (as the spec asks), beside an ``agent`` method that never answers (a browser
login on the server) and an ``env_var`` one; ``authMethods`` use v2's ``methodId`` when ``$LOGIN_METHOD_ID_KEY`` is
``methodId``. It advertises ``auth.status`` and answers ``auth/status`` from the token file, with an account whose
label is markup (which must be shown as text). ``session/new`` fails with ``auth_required`` until the token file
exists. Everything received is recorded (``$RECORD_FILE``).

With ``$LOGIN_KEYS`` set it offers keys instead, as codex-acp and gemini-cli do: two ``env_var`` methods with
``vars`` (``openai-api-key`` on ``LOGIN_OPENAI_KEY``, ``codex-api-key`` on ``LOGIN_CODEX_KEY``), whose
``authenticate`` succeeds only when the variable is in its environment; a gemini-like ``agent`` method marked
``_meta["api-key"].provider`` whose ``authenticate`` always answers but signs in only when ``GEMINI_API_KEY``
starts with ``good-``; and a ChatGPT login that never answers. ``session/new`` fails with ``auth_required`` until
one signed it in (like codex, even with the variable set), and a prompt's answer names the method.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_jsonrpc import send, serve  # noqa: E402

CODE = "4242"
TOKEN_DIR = Path(os.environ.get("LOGIN_TOKEN_DIR", "."))
TOKEN = TOKEN_DIR / "token"
ACCOUNT = "<b>Test</b> account"
LINK = "https://login.example/device?code=XYZ"


def controlling_tty() -> bool:
    """Whether /dev/tty opens: the pty is this process's controlling terminal (password prompts read from it)."""
    try:
        os.close(os.open("/dev/tty", os.O_RDWR))
    except OSError:
        return False
    return True


def login() -> int:
    TOKEN_DIR.mkdir(parents=True, exist_ok=True)
    sleeper = subprocess.Popen(["sleep", "300"])  # stays in our process group
    run = {
        "argv": sys.argv[1:],
        "login_via": os.environ.get("LOGIN_VIA"),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
        "pgid": os.getpgid(0),
        "sleeper": sleeper.pid,
        "tty": os.isatty(0),
        "controlling_tty": controlling_tty(),
    }
    with (TOKEN_DIR / "runs.jsonl").open("a") as runs:
        runs.write(json.dumps(run) + "\n")
    print(f"Test login ({'on a terminal' if os.isatty(0) else 'NOT on a terminal'}).")
    print(f"Open {LINK} in your browser.")
    try:
        code = input("Enter the code: ").strip()
    except EOFError:
        return 4
    if code != CODE:
        print("Wrong code.")
        return 3
    TOKEN.write_text("signed-in")
    print("Signed in.")
    return 0


KEYS = os.environ.get("LOGIN_KEYS")
KEY_VARS = {"openai-api-key": "LOGIN_OPENAI_KEY", "codex-api-key": "LOGIN_CODEX_KEY"}
_signed_in: dict[str, str] = {}


def key_methods() -> list[dict[str, Any]]:
    return [
        {"id": "chatgpt", "name": "Login with ChatGPT", "description": "Use your ChatGPT login."},
        {"id": "openai-api-key", "type": "env_var", "name": "Use OPENAI_API_KEY",
         "vars": [{"name": "LOGIN_OPENAI_KEY", "label": "OpenAI API key"}]},
        {"id": "codex-api-key", "type": "env_var", "name": "Use CODEX_API_KEY", "vars": [{"name": "LOGIN_CODEX_KEY"}]},
        {"id": "gemini-api-key", "name": "Gemini API key", "_meta": {"api-key": {"provider": "gemini"}}},
        {"id": "vertex-ai", "name": "Vertex AI"},
    ]  # fmt: skip


def authenticate_with_key(method_id: str) -> dict[str, Any] | None:
    """``authenticate`` as the key agent answers it: an error, or None (signed in, or not but answered)."""
    if method_id == "gemini-api-key":
        if os.environ.get("GEMINI_API_KEY", "").startswith("good-"):
            _signed_in["by"] = method_id
        return None
    name = KEY_VARS.get(method_id)
    if name is None or not os.environ.get(name):
        return {"code": -32603, "message": "Internal error", "data": {"message": f"{name or method_id} is not set"}}
    _signed_in["by"] = method_id
    return None


def methods(terminal: bool) -> list[dict[str, Any]]:
    if KEYS:
        return key_methods()
    key = os.environ.get("LOGIN_METHOD_ID_KEY", "id")
    offered = [
        {key: "browser", "name": "Log in with a browser", "description": "Opens a login page."},
        {key: "key", "type": "env_var", "name": "API key", "vars": [{"name": "LOGIN_TEST_KEY"}]},
    ]
    if terminal:
        offered.insert(
            0,
            {
                key: "login",
                "type": "terminal",
                "name": "Log in in a terminal",
                "description": "Asks for a code.",
                "args": ["--login"],
                "env": {"LOGIN_VIA": "terminal"},
            },
        )
    return offered


def signed_in() -> bool:
    return bool(_signed_in) if KEYS else TOKEN.exists()


def status() -> dict[str, Any]:
    if signed_in():
        return {"state": "authenticated", "accounts": [{"label": ACCOUNT, "email": "me@example.com", "active": True}]}
    return {"state": "unauthenticated"}


def handle(message: dict[str, Any]) -> None:
    method, params, request_id = message.get("method"), message.get("params") or {}, message.get("id")
    if method == "initialize":
        auth = (params.get("clientCapabilities") or {}).get("auth") or {}
        result = {
            "protocolVersion": 1,
            "agentCapabilities": {"auth": {"status": {}}},
            "authMethods": methods(auth.get("terminal") is True),
        }
        send({"id": request_id, "result": result})
    elif method == "auth/status":
        send({"id": request_id, "result": status()})
    elif method == "authenticate":
        if params.get("methodId") in ("browser", "chatgpt"):
            return  # never answers: it waits for a browser on the server
        if KEYS:
            error = authenticate_with_key(str(params.get("methodId")))
            send({"id": request_id, **({"error": error} if error else {"result": {}})})
            return
        send({"id": request_id, "error": {"code": -32603, "message": "authenticate is not how this method works"}})
    elif method == "session/new":
        if not signed_in():
            send({"id": request_id, "error": {"code": -32000, "message": "Authentication required"}})
            return
        send({"id": request_id, "result": {"sessionId": "login-1"}})
        send({"method": "auth/status_update", "params": status()})
    elif method == "session/prompt":
        said = f"signed in and working ({_signed_in['by']})" if KEYS else "signed in and working"
        text = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": said}}
        send({"method": "session/update", "params": {"sessionId": params.get("sessionId"), "update": text}})
        send({"id": request_id, "result": {"stopReason": "end_turn"}})
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    if "--login" in sys.argv:
        sys.exit(login())
    serve(handle)

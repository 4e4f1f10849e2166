"""Run bwrap with a network of its own that reaches out but not the host's loopback (run as a script, stdlib only).

``python -I -S sandbox_network.py SLIRP4NETNS -- BWRAP OPTIONS... -- COMMAND...`` starts bwrap (whose options, from
`webclient.workspace.sandbox.Sandbox.command`, give it a network namespace of its own and name the file descriptors
below, which this script sets up), learns its sandbox's pid from ``--info-fd``, gives that sandbox's network
namespace a user-mode network with slirp4netns (a ``tap0`` at 10.0.2.100, its gateway 10.0.2.2 answering nothing, its
resolver 10.0.2.3; ``--disable-host-loopback``: the gateway never leads to the host's 127.0.0.1), and only then lets
the command start (``--block-fd``). It stays as bwrap's parent, passes on the signals
it is sent, and exits as bwrap did (the same status, or the same signal); slirp4netns ends with it (``--exit-fd``),
and bwrap (``--die-with-parent``) too when it is killed.

Kept free of the server's own modules: it runs as a script from the server's interpreter, with the agent's environment
(no PYTHONPATH of the server's), before anything of the agent's runs.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import sys
import time
from collections.abc import Sequence

INFO_FD = 3
"""Where bwrap writes its sandbox's pid (``--info-fd 3``)."""
BLOCK_FD = 4
"""What bwrap waits on before it runs the command (``--block-fd 4``): written once the network is up."""
RESOLV_FD = 5
"""The resolver's file for the sandbox (``--ro-bind-data 5 /etc/resolv.conf``): slirp4netns's own resolver."""
RESOLV_CONF = b"nameserver 10.0.2.3\n"
READY_SECONDS = 10.0
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def main(args: Sequence[str]) -> int:
    if len(args) < 4 or args[1] != "--":
        print("usage: sandbox_network.py SLIRP4NETNS -- BWRAP ARGS...", file=sys.stderr)
        return 2
    slirp, bwrap = args[0], list(args[2:])
    info_read, info_write = os.pipe()
    block_read, block_write = os.pipe()
    resolv_read, resolv_write = os.pipe()
    os.write(resolv_write, RESOLV_CONF)  # far less than a pipe holds: written before bwrap reads it
    os.close(resolv_write)
    # Moved above the numbers bwrap is given first, so that placing one never closes another.
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (info_write, block_read, resolv_read)]
    actions = [(os.POSIX_SPAWN_DUP2, fd, target) for fd, target in zip(high, (INFO_FD, BLOCK_FD, RESOLV_FD))]
    sandbox = os.posix_spawnp(bwrap[0], bwrap, dict(os.environ), file_actions=actions)
    for fd in (*high, info_write, block_read, resolv_read):
        os.close(fd)
    # Its stdin and stdout are the sandbox's alone: a pipe or terminal reaches its end when the sandbox's ends.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    for forwarded in FORWARDED:
        signal.signal(forwarded, lambda received, _frame: _pass_on(sandbox, received))
    pid = _sandbox_pid(info_read)
    os.close(info_read)
    # Its namespaces, taken now: bwrap holds the sandbox until told (the pid comes first), and later puts it in a
    # user namespace nested in the one owning its network (--disable-userns), from which none could configure it.
    namespaces = _namespaces(pid) if pid is not None else None
    network = None
    if namespaces is not None:
        network = _network(slirp, namespaces, _loopback_up(sandbox, pid))
        for fd in namespaces:
            os.close(fd)
    if network is None:  # bwrap failed (and said why), or the network did: the command never starts
        for process in (sandbox, pid):
            if process is not None:
                _pass_on(process, signal.SIGKILL)
        status = _wait(sandbox)
        os.close(block_write)
        if pid is None:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1
        print("sandbox network: slirp4netns could not give the sandbox its network", file=sys.stderr)
        return 1
    else:
        os.write(block_write, b"1")
        os.close(block_write)
        status = _wait(sandbox)
    os.close(network[1])  # slirp4netns ends when its exit fd closes
    _wait(network[0])
    if os.WIFSIGNALED(status):  # end as bwrap did: by the same signal
        number = os.WTERMSIG(status)
        if number != signal.SIGKILL:
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    return os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 1


def _sandbox_pid(info: int) -> int | None:
    """The pid bwrap reports on its info fd; None when it ended before saying (its own stderr says why)."""
    said = b""
    while chunk := os.read(info, 4096):
        said += chunk
        try:
            return int(json.loads(said)["child-pid"])
        except ValueError:
            continue  # not all of it yet
    return None


def _namespaces(pid: int) -> tuple[int, int] | None:
    """The user and network namespaces of ``pid``, open (None: it is gone)."""
    try:
        user = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
    except OSError:
        return None
    try:
        return user, os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    except OSError:
        os.close(user)
        return None


def _loopback_up(sandbox: int, pid: int | None) -> bool:
    """Whether bwrap has set up the loopback of its namespace (False: bwrap ended first, or took too long).

    slirp4netns brings ``lo`` up too: were it to do so while bwrap adds lo's address, bwrap would fail ("loopback:
    Failed RTM_NEWADDR"). bwrap says nothing when it is done, but then lo is up with 127.0.0.1, which the
    namespace's routing table shows (``/proc/PID/net/fib_trie``, readable by its owner from outside).
    """
    if pid is None:
        return False
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/net/fib_trie", "rb") as table:
                if b"127.0.0.1" in table.read():
                    return True
        except OSError:
            return False  # gone
        if os.waitid(os.P_PID, sandbox, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return False
        time.sleep(0.001)
    return False


def _network(slirp: str, namespaces: tuple[int, int], loopback_up: bool) -> tuple[int, int] | None:
    """Start slirp4netns for the ``namespaces`` (user, network: open fds); its pid and the fd whose closing ends
    it, once it says it is ready (None: it could not, or the loopback is not up)."""
    if not loopback_up:
        return None
    user, net = namespaces
    ready_read, ready_write = os.pipe()
    exit_read, exit_write = os.pipe()
    argv = [slirp, "--configure", "--mtu=65520", "--disable-host-loopback", "--enable-seccomp"]
    if os.geteuid() == 0:  # root's slirp4netns then drops its capabilities; another user's cannot (no uid 0 to be)
        argv.append("--enable-sandbox")
    argv += ["--ready-fd", str(ready_write), "--exit-fd", str(exit_read)]
    argv += [f"--userns-path=/proc/self/fd/{user}", "--netns-type=path", f"/proc/self/fd/{net}", "tap0"]
    null = os.open(os.devnull, os.O_RDWR)
    # slirp4netns talks on stdout and stderr of every packet of its own setup: not the agent's to read.
    actions = [(os.POSIX_SPAWN_DUP2, null, fd) for fd in (0, 1, 2)]
    for fd in (ready_write, exit_read, user, net):
        os.set_inheritable(fd, True)
    try:
        helper = os.posix_spawn(slirp, argv, dict(os.environ), file_actions=actions)
    except OSError as error:
        print(f"sandbox network: {slirp}: {error}", file=sys.stderr)
        return None
    finally:
        for fd in (null, ready_write, exit_read):
            os.close(fd)
    ready, _, _ = select.select([ready_read], [], [], READY_SECONDS)
    up = bool(ready) and os.read(ready_read, 1) == b"1"
    os.close(ready_read)
    if not up:
        os.close(exit_write)
        _wait(helper)
        return None
    return helper, exit_write


def _pass_on(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def _wait(pid: int) -> int:
    """``pid``'s wait status, once it has ended (signals that arrive meanwhile are passed on, then waited again)."""
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

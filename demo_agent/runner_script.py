"""The test runner the ``run`` scenario asks the client to execute: ``python -u -c <this source, sans docstring>``.

The source travels as the ``-c`` argument of ``terminal/create``; nothing is written to the workspace. It must
stay self-contained (standard library only, no imports from ``webclient``): it runs in the session cwd, in a
fresh interpreter. It imports the sample project's ``tests/test_calculator.py`` (with ``src/`` on the path), runs
each ``test_*`` function and prints like a terminal program: ANSI colours, a progress bar redrawn in place with
``\\r``, a bold summary line ``=== 3 passed in 0.80s ===``. Exit status 0 when every test passed, 1 otherwise.
In any other folder (the user picked their own) it only lists the top-level entries and exits 0.
``DEMO_AGENT_SPEED`` scales the pause between tests (0 = none). Importing this module runs nothing.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import sys
import time
import types
from collections.abc import Callable, Iterator

TEST_FILE = os.path.join("tests", "test_calculator.py")
PAUSE = 0.25  # seconds between tests at DEMO_AGENT_SPEED=1
BAR_WIDTH = 20
MAX_LISTED = 30
GREEN, RED, YELLOW, BLUE, BOLD, DIM, RESET = (f"\x1b[{code}m" for code in (32, 31, 33, 34, 1, 2, 0))
CLEAR_LINE = "\r\x1b[K"


def _pause() -> None:
    try:
        speed = max(float(os.environ.get("DEMO_AGENT_SPEED", "1")), 0.0)
    except ValueError:
        speed = 1.0
    if speed:
        time.sleep(PAUSE * speed)


def _bar(done: int, total: int) -> str:
    filled = BAR_WIDTH * done // total if total else BAR_WIDTH
    return f"{CLEAR_LINE}{DIM}[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {done}/{total}{RESET}"


def _install_pytest_stand_in() -> None:
    """The sample tests only use ``pytest.raises``; provide it when pytest is not installed."""
    try:
        import pytest  # noqa: F401
    except ImportError:
        stand_in = types.ModuleType("pytest")

        @contextlib.contextmanager
        def raises(expected: type[BaseException], match: str | None = None) -> Iterator[None]:
            try:
                yield
            except expected:
                return
            raise AssertionError(f"DID NOT RAISE {expected.__name__}")

        stand_in.raises = raises  # type: ignore[attr-defined]
        sys.modules["pytest"] = stand_in


def _list_workspace(cwd: str) -> int:
    print(f"{YELLOW}No {TEST_FILE} here{RESET}, so nothing to test: listing the folder instead.")
    entries = sorted((name for name in os.listdir(cwd) if not name.startswith(".")), key=str.lower)[:MAX_LISTED]
    for index, name in enumerate(entries, start=1):
        _pause()
        is_dir = os.path.isdir(os.path.join(cwd, name))
        print(f"{CLEAR_LINE}  {BLUE + name + '/' + RESET if is_dir else name}")
        sys.stdout.write(_bar(index, len(entries)))
        sys.stdout.flush()
    print(f"\n{BOLD}=== listed {len(entries)} entries ==={RESET}")
    return 0


def _collect(cwd: str) -> list[tuple[str, Callable[[], object]]]:
    sys.path[:0] = [cwd, os.path.join(cwd, "src")]
    _install_pytest_stand_in()
    spec = importlib.util.spec_from_file_location("test_calculator", os.path.join(cwd, TEST_FILE))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(name, fn) for name, fn in vars(module).items() if name.startswith("test_") and inspect.isfunction(fn)]


def main() -> int:
    sys.dont_write_bytecode = True  # leave no __pycache__ behind in the user's workspace
    cwd = os.getcwd()
    if not os.path.isfile(os.path.join(cwd, TEST_FILE)):
        return _list_workspace(cwd)
    print(f"{BOLD}Running {TEST_FILE}{RESET} {DIM}(Python {sys.version.split()[0]}){RESET}")
    try:
        tests = _collect(cwd)
    except Exception as exc:  # a syntax error in the project, a missing module...
        print(f"{RED}{BOLD}ERROR{RESET} collecting {TEST_FILE}: {type(exc).__name__}: {exc}")
        print(f"{RED}{BOLD}=== error during collection ==={RESET}")
        return 2
    started = time.monotonic()
    failed: list[str] = []
    sys.stdout.write(_bar(0, len(tests)))
    sys.stdout.flush()
    for index, (name, test) in enumerate(tests, start=1):
        _pause()
        try:
            if inspect.signature(test).parameters:
                raise TypeError("needs pytest fixtures, which this small runner does not provide")
            test()
        except Exception as exc:
            failed.append(name)
            print(f"{CLEAR_LINE}{RED}FAILED{RESET} {name}")
            print(f"       {DIM}{type(exc).__name__}: {exc}{RESET}")
        else:
            print(f"{CLEAR_LINE}{GREEN}PASSED{RESET} {name}")
        sys.stdout.write(_bar(index, len(tests)))
        sys.stdout.flush()
    elapsed = time.monotonic() - started
    passed = len(tests) - len(failed)
    counts = f"{passed} passed" + (f", {len(failed)} failed" if failed else "")
    colour = RED if failed else GREEN
    print(f"\n{colour}{BOLD}=== {counts} in {elapsed:.2f}s ==={RESET}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

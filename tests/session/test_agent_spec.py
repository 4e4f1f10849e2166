"""How an agent's command line is read and shown (``webclient.session.agent_spec``)."""

from __future__ import annotations

import pytest

from webclient.session.agent_spec import command_display, split_command


def test_split_command_uses_shell_quoting() -> None:
    assert split_command("npx -y 'my agent' --model \"gpt x\"") == ["npx", "-y", "my agent", "--model", "gpt x"]
    with pytest.raises(ValueError):
        split_command("   ")
    with pytest.raises(ValueError):
        split_command("agent 'unbalanced")


def test_command_display_summarises_long_inline_scripts() -> None:
    assert command_display("ls", ["-l", "my dir"]) == "ls -l 'my dir'"
    assert command_display("python", ["-c", "import os\nprint(os.getcwd())"]) == "python -c '<2 lines>'"
    assert command_display("echo", ["x" * 100]) == f"echo '{'x' * 60}…'"

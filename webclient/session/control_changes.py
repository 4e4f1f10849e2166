"""Changes the user asks of the agent's controls: its mode, its model, one of its settings."""

from __future__ import annotations

from collections.abc import Awaitable

from webclient.session.agent import AgentDriver, AgentGone, AgentRefused
from webclient.session.agent_lifecycle import AgentLifecycle
from webclient.session.shown import Shown
from webclient.session.tasks import BackgroundTasks
from webclient.viewmodel.controls import SessionControls
from webclient.viewmodel.events import Region


class ControlChanges:
    """Asks the agent, in the background, for what the user chose in a selector; the controls show the
    choice once the agent agreed, and a refusal as a notice, the selector back at the agent's value."""

    def __init__(
        self,
        agent: AgentDriver,
        lifecycle: AgentLifecycle,
        controls: SessionControls,
        shown: Shown,
        tasks: BackgroundTasks,
    ) -> None:
        self.agent = agent
        self.lifecycle = lifecycle
        self.controls = controls
        self.shown = shown
        self.tasks = tasks

    def set_mode(self, mode_id: str) -> None:
        """Switch the session to one of the agent's modes."""
        controls = self.controls
        if self.lifecycle.ready and controls.mode(mode_id) is not None and mode_id != controls.current_mode:
            self.tasks.spawn(self._ask("the mode", self.agent.set_mode(mode_id)), "set-mode")

    def set_model(self, model_id: str) -> None:
        """Switch the agent's model (for agents that offer models)."""
        controls = self.controls
        if self.lifecycle.ready and controls.model(model_id) is not None and model_id != controls.current_model:
            self.tasks.spawn(self._ask("the model", self.agent.set_model(model_id)), "set-model")

    def set_setting(self, setting_id: str, value: str) -> None:
        """Change one of the agent's settings; ``value`` as the page sent it."""
        setting, choice = self.controls.setting(setting_id), self.controls.choice(setting_id, value)
        if self.lifecycle.ready and setting is not None and choice is not None:
            self.tasks.spawn(self._ask(f"“{setting.name}”", self.agent.set_setting(setting_id, choice)), "set-setting")

    async def _ask(self, what: str, change: Awaitable[None]) -> None:
        try:
            await change
        except AgentRefused as error:
            self.shown.notice("error", f"The agent did not change {what}", str(error))
            self.controls.refresh(Region.CONTROLS)
        except AgentGone:
            pass  # the adapter reports it

"""The live socket: a session page's live view and socket, who has it open, the agent authentication socket."""

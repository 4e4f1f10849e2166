"""The protocol-neutral core: a session (lifecycle, turns, queue, controls), the agent it drives, the registry."""

"""The Agent Client Protocol: the JSON-RPC peer, the agent process, the wire shapes, what the agent may ask of us."""

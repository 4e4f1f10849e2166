"""A browser client for coding agents that speak the Agent Client Protocol (ACP)."""

__version__ = "0.1.0"

"""People: who a request comes from, and what they may do with a session (no web, no store, no protocol)."""

"""A remote agent to demo and test with: an Agent Application Protocol (AAP v3) server, with no key and no network.

It streams text and thinking, calls the client's tools in parallel, has a trusted and an untrusted server tool and
one tool it does not expose, serves every stream mode (``delta``, ``message``, ``none``) and both histories.
Run it with ``python -m demo_aap --port 8765``. Spec: ../shared/docs/aap-v3.md and the seed page on tool calls.
"""

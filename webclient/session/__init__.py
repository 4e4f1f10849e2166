"""One running session, protocol-neutral: its agent's life, turns, queue, controls, answers and journal, and the
AgentDriver seam a protocol implements (the agents a server offers and the sessions made of them: `webclient.agents`).
"""

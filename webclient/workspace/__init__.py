"""The agent's view of the user's disk: which files it may touch (`paths`, opened through `no_follow`), how text
is read and written (`files`), what it changed (`changes`) and the commands it runs (`terminals`, each a
`terminal_process`).

Everything an agent asks of the client's file system goes through here, so that the rules about what lies
inside the workspace are written, and tested, in one place.
"""

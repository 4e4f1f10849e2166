"""What restoring a checkpoint would change, for the ``<details>`` on a person's message that asks when opened.

Only a person who may drive the session sees it (a watcher gets 403, and no buttons); the restore and the resend go
through the page's socket (`webclient.web.live.session_socket`), which checks again.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from webclient.session.checkpoints import BUSY, Checkpoints
from webclient.viewmodel.entries import MessageEntry
from webclient.web.context import base_context, renderer, session_of
from webclient.web.live.live_view import composer_nonce
from webclient.workspace.checkpoint_git import CheckpointFailed

SHOWN = 200
"""Files a preview names; the rest are counted."""


async def checkpoint_preview(request: Request) -> Response:
    """The files a restore of the checkpoint before entry ``seq`` changes, and the Restore and Edit-and-resend forms.

    Raises:
        HTTPException: 404 when the session is not the person's to see, 403 when they may only watch it.
    """
    session = await session_of(request, "drive")
    seq: int = request.path_params["seq"]
    checkpoints: Checkpoints = session.checkpoints
    entry = session.thread.get(seq)
    failed, changes = None, []
    try:
        changes = await checkpoints.preview(seq)
    except CheckpointFailed as error:
        failed = str(error)
    html = renderer(request).page(
        "_checkpoint_preview.html",
        **base_context(request),
        session=session,
        seq=seq,
        checkpoint=checkpoints.by_entry.get(seq),
        changes=changes,
        shown=SHOWN,
        failed=failed,
        refusal=checkpoints.refusal(seq),
        busy=BUSY,
        fork=session.agent.can_fork,
        text=entry.text if isinstance(entry, MessageEntry) else "",
        nonce=composer_nonce(),
    )
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})

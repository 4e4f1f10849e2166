"""Copy the pinned front-end files from node_modules to static/vendor, checking their published SHA-384."""

from __future__ import annotations

import base64
import hashlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = {
    # htmx.org 2.0.11 and htmx-ext-ws 2.0.4, hashes as published (see docs/deployment.md).
    "node_modules/htmx.org/dist/htmx.min.js": "2OatzQy1H+Zd/IIrjr1TcuDGqLXeHhbooAyJY1KdQMKnr4LZ22k31GBLdYKHmVjg",
    "node_modules/htmx-ext-ws/dist/ws.min.js": "1RwI/nvUSrMRuNj7hX1+27J8XDdCoSLf0EjEyF69nacuWyiJYoQ/j39RT1mSnd2G",
    # @xterm/xterm 6.0.0, @xterm/addon-fit 0.11.0 and @xterm/addon-web-links 0.12.0: the sign-in terminal (ES
    # modules, loaded only on a page that shows one). No hash is published per file: these are the files of the
    # tarballs npm checked against package-lock.json's integrity.
    "node_modules/@xterm/xterm/lib/xterm.mjs": "8Xik+BkzF4UFDtZa8HkUiQ0FE/Xl+03xMuv69uQB3ichDzm8dWs4kPRihQxSZDiY",
    "node_modules/@xterm/xterm/css/xterm.css": "n2n7twoohnW+d3myBKaUgl7DSiwidw6MkQy9oesGzkPpMjejKRR3XlnD+5yCdtBD",
    "node_modules/@xterm/addon-fit/lib/addon-fit.mjs": (
        "0/1EW6dUPoaun7dgdlOtb5Wk8x5UQRW6hYM3ihuCCnaA2Xd4HwMFcn378RpxmoAc"
    ),
    "node_modules/@xterm/addon-web-links/lib/addon-web-links.mjs": (
        "8xdb77IBX7nO5M3j14TJ/k10PpINL32DVcHHKNjUWkNcsRqFNRg7Cx7jeHWPkcGy"
    ),
}


def main() -> int:
    target = ROOT / "static" / "vendor"
    target.mkdir(parents=True, exist_ok=True)
    for relative, expected in ASSETS.items():
        source = ROOT / relative
        digest = base64.b64encode(hashlib.sha384(source.read_bytes()).digest()).decode()
        if digest != expected:
            print(f"{relative}: SHA-384 {digest} is not the published {expected}", file=sys.stderr)
            return 1
        shutil.copyfile(source, target / source.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the browser tests share: a browser context per person or page, checked for JavaScript errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import Browsers


@pytest.fixture
def browsers(browser: Any) -> Iterator[Browsers]:
    """Pages of their own contexts (`Browsers.page`); a JavaScript error in any of them fails the test."""
    opened = Browsers(browser)
    yield opened
    opened.close()

"""Reading markup as a browser would: elements with their ancestors, text, and text compared without whitespace."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


class Element:
    """A start tag as parsed: its name, its attributes (last value wins), and where it sits."""

    def __init__(self, tag: str, attrs: list[tuple[str, str | None]], path: tuple[str, ...]) -> None:
        self.tag = tag
        self.attr_list = [(name, value or "") for name, value in attrs]
        self.attrs = dict(self.attr_list)
        self.path = path

    def __repr__(self) -> str:
        return f"<{self.tag} {self.attrs}> in {'/'.join(self.path)}"


class Parsed(HTMLParser):
    """Every element, and the text with where each run of it sits (for visibility checks)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.texts: list[tuple[tuple[str, ...], str]] = []
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, attrs, tuple(self._stack)))
        if tag not in VOID:
            self._stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, attrs, tuple(self._stack)))

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:
            while self._stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.texts.append((tuple(self._stack), data))

    @property
    def text(self) -> str:
        return "".join(data for _, data in self.texts)


def parse(markup: str) -> Parsed:
    parsed = Parsed()
    parsed.feed(markup)
    parsed.close()
    return parsed


def squash(text: str) -> str:
    """Text as compared between what we sent and what shows: no whitespace, no NUL (the HTML parser drops it)."""
    return "".join(text.replace("\x00", "").split())

"""An HTML page's elements as Python's ``html.parser`` reads them, for the tests of a run's
page: every start tag must be closed by its own end tag (a page whose markup a user's
text could break fails here), and text comes unescaped, as a browser shows it."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
"""Elements that have no end tag."""


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]
    children: list[Element | str] = field(default_factory=list)

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def text(self) -> str:
        """The text inside, as a browser shows it (the first newline of a ``<pre>``
        dropped, as browsers drop it)."""
        text = "".join(c if isinstance(c, str) else c.text() for c in self.children)
        return text.removeprefix("\n") if self.tag == "pre" else text

    def all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Element]:
        """Every element below this one with the tag, class and attributes given (an
        attribute named with ``_`` for ``-``: ``data_step``)."""
        found = []
        for child in self.children:
            if isinstance(child, str):
                continue
            if child._matches(tag, cls, attrs):
                found.append(child)
            found.extend(child.all(tag, cls, **attrs))
        return found

    def one(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Element:
        """The one element below this one that matches."""
        (found,) = self.all(tag, cls, **attrs)
        return found

    def _matches(self, tag: str | None, cls: str | None, attrs: dict[str, str]) -> bool:
        return (
            (tag is None or self.tag == tag)
            and (cls is None or cls in self.classes)
            and all(self.attrs.get(name.replace("_", "-")) == v for name, v in attrs.items())
        )


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.open = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.open[-1].children.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # An SVG element written as <line .../>.
        self.open[-1].children.append(Element(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        closed = self.open.pop()
        assert closed.tag == tag, f"</{tag}> closes <{closed.tag}>"

    def handle_data(self, data: str) -> None:
        self.open[-1].children.append(data)


def parse(html: str) -> Element:
    """The page's elements; fails on an element left open or closed by another's tag."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    assert [element.tag for element in builder.open] == ["#document"], "elements left open"
    return builder.root

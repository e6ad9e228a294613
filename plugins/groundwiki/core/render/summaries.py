"""A page's summary as the site shows it: a derived one (the body's first sentence, taken because
the page has no summary of its own) says so, in its class and its tooltip, wherever it is shown:
a reader should not take a machine's pick for the writer's words."""

from __future__ import annotations

from html import escape

from groundwiki.core.model.records import Page

DERIVED_CLASS = "gw-summary-derived"
DERIVED_TIP = "Derived: the first sentence of the page, which has no summary of its own"


def summary_attributes(page: Page, css_class: str = "") -> str:
    """The class and title attributes of the element that holds `page`'s summary, with a
    leading space ('' when there is nothing to say)."""
    classes = " ".join(c for c in (css_class, DERIVED_CLASS if page.summary_derived else "") if c)
    attributes = f' class="{classes}"' if classes else ""
    if page.summary_derived:
        attributes += f' title="{escape(DERIVED_TIP)}"'
    return attributes


def inline_summary(page: Page) -> str:
    """The summary as HTML inside a line of a listing: the text, in a marked span if derived."""
    if not page.summary:
        return ""
    text = escape(page.summary)
    return f"<span{summary_attributes(page)}>{text}</span>" if page.summary_derived else text

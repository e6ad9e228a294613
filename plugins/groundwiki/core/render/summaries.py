"""A page's summary as the site shows it: a derived one (the body's first sentence, taken because
the page has no summary of its own) is shown only when the site asks for it
(`show_derived_summaries`), and then says so, in its class and its tooltip, wherever it is
shown: a reader should not take a machine's pick for the writer's words. Search and agents get
it either way, marked derived."""

from __future__ import annotations

from html import escape

from groundwiki.core.model.records import Page

DERIVED_CLASS = "gw-summary-derived"
DERIVED_TIP = "Derived: the first sentence of the page, which has no summary of its own"


def shown_summary(page: Page, derived: bool) -> str | None:
    """The summary the site shows of `page`: the writer's; a derived one only when `derived`
    (often the first sentence is no summary: "Didn't find what you were looking for?")."""
    return page.summary if derived or not page.summary_derived else None


def summary_attributes(page: Page, css_class: str = "") -> str:
    """The class and title attributes of the element that holds `page`'s summary, with a
    leading space ('' when there is nothing to say)."""
    classes = " ".join(c for c in (css_class, DERIVED_CLASS if page.summary_derived else "") if c)
    attributes = f' class="{classes}"' if classes else ""
    if page.summary_derived:
        attributes += f' title="{escape(DERIVED_TIP)}"'
    return attributes


def inline_summary(page: Page, derived: bool) -> str:
    """The summary as HTML inside a line of a listing: the text, in a marked span if derived;
    '' when there is none to show (`derived`: a derived one is shown)."""
    summary = shown_summary(page, derived)
    if not summary:
        return ""
    text = escape(summary)
    return f"<span{summary_attributes(page)}>{text}</span>" if page.summary_derived else text

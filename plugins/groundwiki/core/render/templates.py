"""The Jinja2 templates of the HTML groundwiki adds to a site: the graph, lint, tags and A–Z
pages, and each page's footer (backlinks, sources, local graph).

The templates ship in the package (`templates/groundwiki/*.html`). A site replaces one by
putting a file of the same name in one of the override folders, looked in first: the MkDocs
plugin passes its theme's folders, so `overrides/groundwiki/lint.html` under the theme's
`custom_dir` wins, as for the theme's own templates. The core knows folders, not MkDocs.

Every value a template prints is escaped (autoescape), with the standard library's rules that
the rest of the renderer uses (`'` as `&#x27;`), so the HTML is the same byte for byte as
before templates; what the renderer already made HTML comes in marked safe (`Markup`).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from functools import cache
from os import PathLike
from typing import Any

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PackageLoader,
    StrictUndefined,
    TemplateError,
    TemplateSyntaxError,
)
from markupsafe import Markup

from ..errors import GroundwikiError
from .slots import Slots

FOLDER = (
    "groundwiki"  # templates are named `groundwiki/<name>.html`, in the package and in overrides
)


def _escaped(value: Any) -> Any:
    """Autoescape with `html.escape`: markupsafe writes `'` as `&#39;`, the renderer `&#x27;`."""
    if hasattr(value, "__html__"):
        return value
    return Markup(html.escape(str(value)))


class TemplateProblem(GroundwikiError):
    """A template (an override, as a rule) that does not render."""


class Templates:
    def __init__(self, overrides: Iterable[str | PathLike[str]] = ()) -> None:
        folders = [str(folder) for folder in overrides]
        loaders: list[BaseLoader] = [FileSystemLoader(folders)] if folders else []
        loaders.append(PackageLoader("groundwiki.core.render", "templates"))
        self.overrides = tuple(folders)
        self.environment = Environment(
            loader=ChoiceLoader(loaders),
            autoescape=True,
            finalize=_escaped,
            undefined=StrictUndefined,  # a misspelt name in an override fails the build
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )

    def render(self, name: str, **context: Any) -> str:
        try:
            return self.environment.get_template(f"{FOLDER}/{name}").render(**context)
        except TemplateError as exc:
            where = _place(exc) or f"{FOLDER}/{name}"
            raise TemplateProblem(
                f"{where}: the template does not render ({type(exc).__name__}: {exc}); fix it, "
                "or delete the override to use groundwiki's own (its variables are listed at "
                "its top)"
            ) from exc


def _place(exc: TemplateError) -> str | None:
    """`file:line` of the template at fault: Jinja gives it for a syntax error, and puts the
    template's own file and line in the traceback for an error while rendering."""
    if isinstance(exc, TemplateSyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    tb = exc.__traceback__
    place = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(".html"):
            place = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return place


@cache
def default_templates() -> Templates:
    """The package's templates alone, for renders without a site (tests, the CLI)."""
    return Templates()


def slot_functions(slots: Slots) -> dict[str, Callable[[str], Markup]]:
    """`slot(html)` and `late(html)` for a template: the placeholder of a slot holding the
    HTML, searchable or filled after site search has read the page (see slots.py)."""

    def slot(fragment: str) -> Markup:
        return Markup(slots.put(str(fragment)))

    def late(fragment: str) -> Markup:
        return Markup(slots.put(str(fragment), searchable=False))

    return {"slot": slot, "late": late}

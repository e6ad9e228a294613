"""The Jinja2 templates of the HTML groundwiki adds to a site: the graph, lint, tags and A–Z
pages, and each page's footer (backlinks, sources, local graph).

The templates ship in the package (`templates/groundwiki/*.html`). A site replaces one by
putting a file of the same name in one of the override folders, looked in first: the MkDocs
plugin passes its theme's folders, so `overrides/groundwiki/lint.html` under the theme's
`custom_dir` wins, as for the theme's own templates. The core knows folders, not MkDocs.
`Templates.check` compiles them all (and what they include), so that the plugin stops a build
on a broken override before any page is built.

What a template writes is Markdown with HTML, so a value it prints must be text for both: HTML
escaping alone leaves `[x](javascript:…)` a link and `{: onclick=… }` an attribute (attr_list)
wherever Markdown reads the line. Every string a template receives is a `Text`, whose HTML form
(`__html__`, which autoescape, `|e`, `|join`, `|replace`, `~` and even `|safe` ask for) is
`markdown_text`: HTML's escaping plus character references for what Markdown reads in a line.
A string a template makes itself (`b.title|upper`) is escaped the same way when it is printed
with `{{ }}` or `|e`. What holds no such character is the same byte for byte as with HTML
escaping alone (the standard library's, `'` as `&#x27;`, as the rest of the renderer writes).

What an override can still get wrong: `|tojson` escapes for a `<script>` element only, and
`|safe` on a string the template made (`b.title|upper|safe`) prints it as it is; and a value
printed at the start of a line may still start a block (`#`, `-`, `1.`, `!!!`), of text, never
a link, an attribute or HTML. The shipped templates print what comes from the wiki inside HTML
elements, where Markdown reads nothing.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Callable, Iterable
from functools import cache
from os import PathLike
from pathlib import Path
from typing import Any

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PackageLoader,
    StrictUndefined,
    TemplateNotFound,
    TemplateSyntaxError,
    nodes,
)
from markupsafe import Markup

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.render.body.slots import Slots

FOLDER = (
    "groundwiki"  # templates are named `groundwiki/<name>.html`, in the package and in overrides
)

# What Markdown and its usual extensions read inside a line of text, beyond HTML's `& < > " '`:
# link and image brackets, attr_list's braces, code spans, backslash escapes, `*` emphasis,
# table cells; line ends, after which a value could start a block of its own (a reference
# definition, a heading, a list); and the private-use characters of inline slots (slots.py), so
# a value cannot stand for a slot. As character references they read the same in a browser, and
# as text to Markdown. `_` is left as it is: file names and URLs hold it, and Markdown reads it
# only around whole words (`_x_`), as emphasis.
_MARKDOWN_CHARACTERS = "[]{}\\`*|\n\r\ue000\ue001"
_MARKDOWN = re.compile(f"[{re.escape(_MARKDOWN_CHARACTERS)}]")
_REFERENCES = {c: f"&#{ord(c)};" for c in _MARKDOWN_CHARACTERS}


def _references(text: str) -> str:
    return _MARKDOWN.sub(lambda match: _REFERENCES[match[0]], text)


def markdown_text(value: str) -> str:
    """`value` as text in HTML and in Markdown alike."""
    return _references(html.escape(value))


class Text(str):
    """A string a template prints as text, however it prints it: every escape asks `__html__`."""

    __slots__ = ()

    def __html__(self) -> str:
        return markdown_text(self)


def _escaped(value: Any) -> Any:
    """Autoescape (and `|e`) with `markdown_text`: markupsafe would write `'` as `&#39;`, the
    renderer writes `&#x27;`, and neither would escape what Markdown reads."""
    if hasattr(value, "__html__"):
        return value
    return Markup(markdown_text(str(value)))


def _force_escaped(value: Any) -> Markup:
    return Markup(markdown_text(str(value)))


def _as_text(value: Any) -> Any:
    """`value` as a template reads it: a string as a `Text`; a fragment of HTML the renderer
    made (a summary, a finding's message) with Markdown's characters as references, which it
    holds only in text and attribute values; the items of a list or tuple the same way."""
    if isinstance(value, Markup):
        return Markup(_references(str(value)))
    if isinstance(value, str):
        return value if isinstance(value, Text) else Text(value)
    if type(value) in (list, tuple):
        return type(value)(_as_text(item) for item in value)
    return value


class _TextEnvironment(Environment):
    """Reads what a template names (`b.title`, `counts[0][0]`) through `_as_text`: as it asks,
    not the whole context up front, which would cost more than the render."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        return _as_text(super().getattr(obj, attribute))

    def getitem(self, obj: Any, argument: Any) -> Any:
        return _as_text(super().getitem(obj, argument))


class TemplateProblem(GroundwikiError):
    """A template (an override, as a rule) that does not compile or does not render."""


class Templates:
    def __init__(self, overrides: Iterable[str | PathLike[str]] = ()) -> None:
        folders = [str(folder) for folder in overrides]
        package = PackageLoader("groundwiki.core.render", "templates")
        loaders: list[BaseLoader] = [FileSystemLoader(folders)] if folders else []
        loaders.append(package)
        self.overrides = tuple(folders)
        # The templates groundwiki renders: the package's.
        self.names = tuple(
            name for name in package.list_templates() if name.startswith(f"{FOLDER}/")
        )
        self.loader = ChoiceLoader(loaders)
        self.environment = _TextEnvironment(
            loader=self.loader,
            autoescape=True,
            finalize=_escaped,
            undefined=StrictUndefined,  # a misspelt name in an override fails the build
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
        self.environment.filters.update(e=_escaped, escape=_escaped, forceescape=_force_escaped)

    def signature(self) -> tuple[object, ...]:
        """What the rendered text depends on besides the data: the override folders, and the
        time and size of every file in them (a server's rebuild after an override's edit must
        render again what it renders)."""
        stamps: list[tuple[str, int, int]] = []
        for folder in self.overrides:
            # Only templates under the folder's groundwiki/ can override ours (the theme's own
            # folders hold hundreds of others).
            for path in sorted((Path(folder) / FOLDER).rglob("*")):
                try:
                    info = path.stat()
                except OSError:
                    continue
                stamps.append((str(path), info.st_mtime_ns, info.st_size))
        return (self.overrides, tuple(stamps))

    def check(self) -> None:
        """Compile every template groundwiki renders and every one they include, import or
        extend by name: TemplateProblem, naming the file and line, for the first that does not
        parse or cannot be found."""
        seen: set[str] = set()
        for name in self.names:
            self._check(name, seen, None)

    def _check(self, name: str, seen: set[str], included_at: str | None) -> None:
        if name in seen:
            return
        seen.add(name)
        environment = self.environment
        try:
            environment.get_template(name)
            source, filename, _ = self.loader.get_source(environment, name)
            tree = environment.parse(source, name, filename)
        except TemplateNotFound as exc:
            where = f" as {self.overrides[0]}/{name}" if self.overrides else ""
            raise TemplateProblem(
                f"{included_at or name}: the template {name!r} is not found in the theme's "
                f"folders nor among groundwiki's own; add it{where}, or remove what names it"
            ) from exc
        except TemplateSyntaxError as exc:
            raise TemplateProblem(
                f"{_place(exc) or name}: the template does not parse ({exc.message}); fix it, "
                "or delete the override to use groundwiki's own"
            ) from exc
        for node in tree.find_all((nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)):
            target = getattr(node, "template", None)  # each of the four names one
            if isinstance(node, nodes.Include) and node.ignore_missing:
                continue
            if isinstance(target, nodes.Const) and isinstance(target.value, str):
                # A name computed while rendering is checked when it renders.
                self._check(target.value, seen, f"{filename or name}:{node.lineno}")

    def fingerprint(self) -> str:
        """A hash of the text of every template groundwiki renders, overrides included: what
        a cached render must have been made with."""
        digest = hashlib.sha256()
        for name in self.names:
            source, _, _ = self.loader.get_source(self.environment, name)
            digest.update(name.encode() + b"\0" + source.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def render(self, name: str, **context: Any) -> str:
        values = {key: _as_text(value) for key, value in context.items()}
        try:
            return self.environment.get_template(f"{FOLDER}/{name}").render(**values)
        except Exception as exc:  # an override may fail in any way: it is the site's, named
            where = _place(exc) or f"{FOLDER}/{name}"
            raise TemplateProblem(
                f"{where}: the template does not render ({type(exc).__name__}: {exc}); fix it, "
                "or delete the override to use groundwiki's own (its variables are listed at "
                "its top)"
            ) from exc


def _place(exc: Exception) -> str | None:
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

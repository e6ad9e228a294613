"""`groundwiki new`: a page with valid frontmatter, from the wiki's template."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from groundwiki.cli.common import add_dry_run, compile_for, finish
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.edit.edits import wiki_edits
from groundwiki.core.edit.new_page import (
    NewPage,
    TemplateError,
    check_name,
    default_title,
    key_of,
    render,
    template_text,
    wikilink,
)
from groundwiki.core.links.resolver import normalise
from groundwiki.core.model.scopes import GLOBAL, GLOBAL_DIR, user_folder, user_of


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    new = commands.add_parser(
        "new",
        parents=[common],
        help="start a page from the wiki's template",
        description="Write wiki/NAME.md from the template (the page_template setting, "
        "templates/page.md by default, else groundwiki's own), refusing a name that a page's "
        "key, alias or file name already holds.",
    )
    new.add_argument("name", metavar="NAME", help="the page's key, or a path: ops/deploy-queue")
    new.add_argument(
        "--title", help="its title (default: from the name, deploy-queue -> Deploy queue)"
    )
    new.add_argument("--summary", help="the one line that says what the page is for")
    new.add_argument("--tags", default="", help="comma-separated: ops,deploys")
    new.add_argument(
        "--scope",
        default=None,
        help="global, or user:ID for a personal page under user/ID/ (default: global/ when "
        "the wiki has that folder, else the wiki's root)",
    )
    add_dry_run(new)
    new.set_defaults(run=run)


def run(args: argparse.Namespace, config: Config) -> int:
    try:
        name = check_name(args.name)
    except ValueError as exc:
        raise GroundwikiError(str(exc)) from None
    folder, user = _scope_folder(config, args.scope)
    path = config.docs_dir / folder / f"{name}.md"
    file_name = name.rsplit("/", 1)[-1]
    wiki = compile_for(config, args.quiet)
    # A user's page may take a shared page's name (it shadows that page for them); within
    # one scope a name is one page's. A user view's resolver holds that user's pages only.
    resolver = wiki.scopes.view(user).resolver if user else wiki.resolver
    seen_by = wiki.scopes.view(user)
    wanted = normalise(file_name)
    holder = resolver.by_key.get(wanted) or resolver.by_alias.get(wanted)
    same_name = resolver.routes.by_name.get(wanted, [])
    if holder is not None or same_name:
        taken = seen_by.pages.get(holder) if holder else None
        where = (
            config.rel(taken.path) if taken else f"{config.rel(config.docs_dir)}/{same_name[0]}.md"
        )
        raise GroundwikiError(
            f"'{file_name}' is already the key, alias or file name of {where}; link to that "
            "page, or choose another name. Nothing was written"
        )
    tags = tuple(dict.fromkeys(t.strip().lstrip("#") for t in args.tags.split(",") if t.strip()))
    title = (args.title or "").strip() or default_title(name)
    shown = config.rel(config.page_template) if config.page_template else ""
    template, template_name = template_text(config.page_template, shown)
    try:
        text = render(template, template_name, NewPage(title, key_of(name), tags, args.summary))
    except TemplateError as exc:
        raise GroundwikiError(str(exc)) from None
    edits = wiki_edits(config)
    edits.write(path, text)
    status = finish(edits, args, f"wrote {config.rel(path)}")
    if not args.dry_run:
        print(f"  link it from a related page: {wikilink(key_of(name))}", file=sys.stderr)
        shared = wiki.pages.get(key_of(name)) if user else None
        if shared is not None:
            print(
                f"  it shadows {config.rel(shared.path)} for {user}: they see this page instead",
                file=sys.stderr,
            )
    return status


def _scope_folder(config: Config, scope: str | None) -> tuple[str, str | None]:
    """The folder a scope's pages live in, from the wiki's root, and the scope's user."""
    if scope is None:
        return (GLOBAL_DIR if (config.docs_dir / GLOBAL_DIR).is_dir() else ""), None
    if scope == GLOBAL:
        return GLOBAL_DIR, None
    user = user_of(scope)
    if user and "/" not in user and not user.startswith("."):
        try:
            check_name(user)
        except ValueError:
            pass
        else:
            return user_folder(user).rstrip("/"), user
    raise GroundwikiError(
        f"--scope {scope}: write global, or user:ID for a user's page (user:alice)"
    )

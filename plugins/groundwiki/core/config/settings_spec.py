"""Settings declared once: each field's type, default, allowed values and doc, and one validator.

A settings dataclass declares its fields with `setting(...)`; `parse(cls, raw, at)` checks the
mapping a user wrote against those declarations and builds the dataclass, and `reference(cls)`
lists them for `groundwiki settings`. The core's options (core/config.py) and the sidecar's
settings (sidecar/settings.py) are both declared here, so every message has one shape: the
file (and line, when known), the setting, and what to write instead.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from groundwiki.core.config.errors import GroundwikiError

SPEC = "groundwiki.setting"  # the key of a field's declaration in its dataclass metadata
T = TypeVar("T")


class ConfigError(GroundwikiError):
    """A configuration the user wrote that groundwiki cannot use; the message says how to fix it."""


@dataclass(frozen=True)
class Block:
    """Where a group of settings is written, for messages: `mkdocs.yml:12: sidecar setting ...`."""

    source: str  # the file as users see it, or "the command line"
    scope: str  # how one setting is called: "groundwiki option", "sidecar setting"
    # The line a setting is written on, looked up only when there is an error to report.
    line_of: Callable[[str], int | None] | None = None

    def where(self, name: str | None = None) -> str:
        line = self.line_of(name) if self.line_of and name else None
        return f"{self.source}:{line}" if line else self.source

    def error(self, name: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.where(name)}: {self.scope} '{name}' {problem}")


class Kind(Protocol):
    """What values a setting takes: `parse` checks one and returns it as the program uses it."""

    def parse(self, value: Any, name: str, at: Block) -> Any: ...

    def describe(self) -> str: ...


def _number(value: Any) -> bool:
    """A finite int or float: YAML's true is an int, and its .nan or .inf would turn every
    score they weigh into nan, which a JSON answer cannot carry."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class Text:
    what: str = "a non-empty string"
    empty: bool = False

    def parse(self, value: Any, name: str, at: Block) -> str:
        if not isinstance(value, str) or (not value and not self.empty):
            raise at.error(name, f"must be {self.what}")
        return value

    def describe(self) -> str:
        return self.what.removeprefix("a ")


@dataclass(frozen=True)
class Integer:
    low: int
    high: int | None = None

    def parse(self, value: Any, name: str, at: Block) -> int:
        if (
            not _number(value)
            or not isinstance(value, int)
            or value < self.low
            or (self.high is not None and value > self.high)
        ):
            raise at.error(name, f"must be {self._range()}, got {value!r}")
        return value

    def _range(self) -> str:
        if self.high is None:
            return "a positive integer" if self.low == 1 else f"an integer >= {self.low}"
        return f"an integer from {self.low} to {self.high}"

    def describe(self) -> str:
        return self._range().removeprefix("a ").removeprefix("an ")


@dataclass(frozen=True)
class Number:
    low: float
    high: float
    unit: str = ""

    def parse(self, value: Any, name: str, at: Block) -> float:
        if not _number(value) or not self.low <= value <= self.high:
            raise at.error(name, f"must be {self.describe()}, got {value!r}")
        return float(value)

    def describe(self) -> str:
        return f"{self.low:g} to {self.high:g}{' ' + self.unit if self.unit else ''}"


@dataclass(frozen=True)
class Flag:
    def parse(self, value: Any, name: str, at: Block) -> bool:
        if not isinstance(value, bool):
            raise at.error(name, "must be true or false")
        return value

    def describe(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]

    def parse(self, value: Any, name: str, at: Block) -> str:
        if value not in self.options:
            raise at.error(name, f"is {value!r}; use one of {', '.join(self.options)}")
        return str(value)

    def describe(self) -> str:
        return " | ".join(self.options)


@dataclass(frozen=True)
class Weights:
    """A number >= 0 for some of a fixed set of names; the others keep their defaults. The names
    and defaults are asked for when a value is checked, so they may come from a registry."""

    defaults: Callable[[], Mapping[str, float]]
    noun: str = "lane"

    def parse(self, value: Any, name: str, at: Block) -> dict[str, float]:
        defaults = dict(self.defaults())
        known = ", ".join(defaults)
        if not isinstance(value, Mapping):
            raise at.error(name, f"must map {self.noun}s to numbers >= 0 ({known})")
        for key, weight in value.items():
            if key not in defaults:
                raise at.error(name, f"names unknown {self.noun} '{key}'; {self.noun}s: {known}")
            if not _number(weight) or weight < 0:
                raise at.error(
                    name, f"gives {self.noun} '{key}' {weight!r}; use a finite number >= 0"
                )
            defaults[key] = float(weight)
        return defaults

    def describe(self) -> str:
        return f"{{{self.noun}: number >= 0}} for any of {', '.join(self.defaults())}"


@dataclass(frozen=True)
class Custom:
    """A value with its own rules (lint rule severities, host names): `check` raises the error."""

    check: Callable[[Any, str, Block], Any]
    text: str

    def parse(self, value: Any, name: str, at: Block) -> Any:
        return self.check(value, name, at)

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class Spec:
    kind: Kind
    doc: str
    blank_is_default: bool  # `name:` with no value (YAML null) means the default


def setting(
    kind: Kind,
    doc: str,
    *,
    default: Any = dataclasses.MISSING,
    factory: Callable[[], Any] | None = None,
    blank_is_default: bool = False,
) -> Any:
    """A dataclass field declared as a setting (typed `Any` so `port: int = setting(...)` checks)."""
    metadata = {SPEC: Spec(kind, doc, blank_is_default)}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _specs(cls: type) -> dict[str, Spec]:
    return {f.name: f.metadata[SPEC] for f in dataclasses.fields(cls) if SPEC in f.metadata}


def parse(cls: type[T], raw: Mapping[str, Any], at: Block, *, others: bool = False) -> T:
    """The dataclass from what the user wrote; a key that is no setting is an error unless
    `others` (the core reads one block shared with the plugin and the sidecar)."""
    specs = _specs(cls)
    if not others:
        unknown = [str(name) for name in raw if name not in specs]
        if unknown:
            raise unknown_settings(unknown, tuple(specs), at)
    values: dict[str, Any] = {}
    for name, spec in specs.items():
        if name not in raw or (raw[name] is None and spec.blank_is_default):
            continue
        values[name] = spec.kind.parse(raw[name], name, at)
    return cls(**values)


def unknown_setting(name: str, known: tuple[str, ...], at: Block) -> ConfigError:
    return unknown_settings([name], known, at)


def unknown_settings(names: list[str], known: tuple[str, ...], at: Block) -> ConfigError:
    """One error for every name that is no setting, so a user fixes them in one go; its line is
    the first one's (`names` in the order written)."""
    known_list = f"known: {', '.join(sorted(known))} (groundwiki settings describes them)"
    if len(names) == 1:
        hint = _meant(names[0], known)
        return ConfigError(
            f"{at.where(names[0])}: unknown {at.scope} '{names[0]}'; "
            f"{f'did you mean {hint}? ' if hint else ''}{known_list}"
        )
    listed = []
    for name in names:
        hint = _meant(name, known)
        listed.append(f"'{name}' (did you mean {hint}?)" if hint else f"'{name}'")
    return ConfigError(
        f"{at.where(names[0])}: unknown {at.scope}s {', '.join(listed)}; {known_list}"
    )


def _meant(name: str, known: tuple[str, ...]) -> str | None:
    close = difflib.get_close_matches(name, known, n=1)
    return f"'{close[0]}'" if close else None


@dataclass(frozen=True)
class Row:
    """One setting as the reference shows it."""

    name: str
    values: str
    default: str
    doc: str


def reference(cls: type) -> list[Row]:
    rows = []
    for field in dataclasses.fields(cls):
        spec = field.metadata.get(SPEC)
        if spec is None:
            continue
        if field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = field.default
        rows.append(Row(field.name, spec.kind.describe(), _yaml(default), spec.doc))
    return rows


def _yaml(value: Any) -> str:
    """A default as it would be written in mkdocs.yml."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    return str(value)

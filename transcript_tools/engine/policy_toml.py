"""Policies to and from TOML: the preset files, a user's policy file, ``[tool.tsum.policy]``.

A policy document is one TOML table: ``name``, ``description``, ``runtime`` (the agent
runtime whose prompt layout it models: its cache breakpoints, ``cost/breakpoints.py``),
``extends`` (a preset to start from; without it, the seed's values) and one sub-table per part
(``[trigger]``, ``[prepass]``, ``[keep]``, ``[summarizer_input]``, ``[placement]``,
``[summary]``) overriding any of that part's keys. A standalone file holds it at the
top level; ``pyproject.toml`` holds it under ``[tool.tsum.policy]``
(``[tool.tsum.policy.trigger]`` …), so both read the same way. ``to_toml`` prints every
value, and ``parse_policy(to_toml(p)) == p``.

Errors are one line, file and line then key: ``my.toml:7: trigger.ratio: must be in (0, 1],
got 1.5`` (``toml_key_line`` finds the line, for settings files too).

Installed packages add policies through the ``tsum.policies`` entry point group
(``plugin_policies``): ``--policy NAME`` and ``tsum policies list`` see them beside the
presets, and a preset's name always wins.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import fields, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..plugins import POLICIES_GROUP, load_entry_points
from ..untrusted import check_file_path
from .kinds import Threshold, TriggerMeasure
from .policy import PART_TYPES, PARTS, Policy, part_fields

PRESETS_PACKAGE = "transcript_tools.engine.presets"
TOP_KEYS = ("name", "description", "runtime", "extends", *PARTS)
DEFAULT_POLICY = "seed"


def preset_names() -> list[str]:
    """The presets shipped in the package, sorted (``seed`` first)."""
    names = [
        entry.name[: -len(".toml")]
        for entry in resources.files(PRESETS_PACKAGE).iterdir()
        if entry.name.endswith(".toml")
    ]
    return sorted(names, key=lambda n: (n != DEFAULT_POLICY, n))


@cache
def preset(name: str) -> Policy:
    """The preset ``name``, parsed and checked (cached: presets never change in a run)."""
    if name not in preset_names():
        raise ConfigError(f"unknown policy preset {name!r} (presets: {', '.join(preset_names())})")
    return _load_preset(name, (name,))


def _load_preset(name: str, chain: tuple[str, ...]) -> Policy:
    text = resources.files(PRESETS_PACKAGE).joinpath(f"{name}.toml").read_text(encoding="utf-8")
    return policy_from_table(loads_toml(text, f"preset {name}"), f"preset {name}", name, chain)


def parse_policy(text: str, source: str, *, default_name: str = "custom") -> Policy:
    """A policy from TOML ``text``; ``source`` names it in errors (a path, ``preset x``)."""
    return policy_from_table(loads_toml(text, source), source, default_name)


def policy_from_table(
    table: Any, source: str, default_name: str = "custom", chain: tuple[str, ...] = ()
) -> Policy:
    """A policy from a parsed TOML table (a file's top level, ``[tool.tsum.policy]``).

    ``chain``: the presets being loaded, to refuse an ``extends`` cycle between them."""
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: a policy must be a TOML table")
    unknown = sorted(set(table) - set(TOP_KEYS))
    if unknown:
        raise ConfigError(f"{source}: {unknown[0]}: unknown key (known: {', '.join(TOP_KEYS)})")
    base = Policy()
    if "extends" in table:
        extends = table["extends"]
        if not isinstance(extends, str) or extends not in preset_names():
            raise ConfigError(
                f"{source}: extends: must name a preset ({', '.join(preset_names())}), got {extends!r}"
            )
        if extends in chain:
            raise ConfigError(f"{source}: extends: {' -> '.join((*chain, extends))} is a cycle")
        base = _load_preset(extends, (*chain, extends)) if chain else preset(extends)
    try:
        values: dict[str, Any] = {"name": table.get("name", default_name)}
        for key in ("description", "runtime"):
            if key in table:
                values[key] = table[key]
        for part in PARTS:
            if part in table:
                values[part] = _part(part, getattr(base, part), table[part])
        policy = replace(base, **values)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    if "extends" in table and "description" not in table:
        policy = replace(policy, description=_inherited_description(table["extends"], base, policy))
    return policy


def _inherited_description(extends: str, base: Policy, policy: Policy) -> str:
    """The description a file that extends a preset and writes none of its own gets: the
    preset's, said to be the preset's, after the values the file changes (a preset's
    description states its values: ``view >= 90%`` is wrong once ``ratio = 0.8``)."""
    changed = [
        f"{part}.{key} = {_toml_value(getattr(getattr(policy, part), key))}"
        for part in PARTS
        for key in part_fields(part)
        if getattr(getattr(policy, part), key) != getattr(getattr(base, part), key)
    ]
    if not changed:
        return base.description
    return f"{extends} with {', '.join(changed)} (the description of {extends}: {base.description})"


def _part(part: str, base: Any, table: Any) -> Any:
    if not isinstance(table, dict):
        raise ConfigError(f"{part}: must be a table ([{part}])")
    known = part_fields(part)
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"{part}.{unknown[0]}: unknown key (known: {', '.join(known)})")
    defaults = {f.name: f.default for f in fields(PART_TYPES[part])}
    values = {key: _value(f"{part}.{key}", defaults[key], value) for key, value in table.items()}
    return replace(base, **values)  # the part's own checks run here


def _value(key: str, default: Any, value: Any) -> Any:
    """TOML's types to the fields' (an integer for a float field; a list for a tuple), by
    the type of the field's default."""
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, tuple):
        if not isinstance(value, list):
            raise ConfigError(f"{key}: must be a list of strings, got {value!r}")
        return tuple(value)
    if isinstance(default, float) and isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{key}: must be a finite number, got {value!r}")
    return value


def loads_toml(text: str, source: str) -> dict[str, Any]:
    """A TOML document (a settings or policy file), or one ``ConfigError`` line naming it."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(f"{source}: invalid TOML (arrays or tables nested too deep)") from None


def toml_key_line(text: str, keys: Sequence[str]) -> int | None:
    """The 1-based line of the TOML document ``text`` where the key ``keys`` is written
    (a path: ``("tool", "tsum", "policy", "trigger", "ratio")``), else where its nearest
    written parent is (a table header, a key holding an inline table); None when none is.
    tomllib gives no position for a value that parses but is wrong: this is where the
    errors of settings and policy files find the line they name."""
    written: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    in_string: str | None = None  # the quotes of a multi-line string being read
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if in_string is not None:
            in_string = None if in_string in line else in_string
            continue
        if line.startswith("["):
            table = _dotted(line.lstrip("[").split("]", 1)[0])
            written.setdefault(table, number)
            continue
        key, equals, value = line.partition("=")
        if not equals or line.startswith("#"):
            continue
        written.setdefault((*table, *_dotted(key)), number)
        in_string = next((q for q in ('"""', "'''") if value.count(q) == 1), None)
    for end in range(len(keys), 0, -1):
        if tuple(keys[:end]) in written:
            return written[tuple(keys[:end])]
    return None


def _dotted(name: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in name.split("."))


def toml_where(path: str, text: str, keys: Sequence[str]) -> str:
    """``path:line`` of the key ``keys`` in the TOML ``text``, or ``path`` where it is not found."""
    line = toml_key_line(text, keys)
    return path if line is None else f"{path}:{line}"


_KEY_PATH = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")


def _at_line(
    exc: ConfigError, source: str, path: str, text: str, prefix: tuple[str, ...]
) -> ConfigError:
    """A policy error (``source: key: message``) as ``path:line: key: message``, the key
    written from the document's top (``tool.tsum.policy.trigger.ratio`` in a pyproject);
    unchanged when it names no key of ``text``."""
    message = str(exc)
    if not message.startswith(f"{source}: "):
        return exc
    key, colon, what = message[len(source) + 2 :].partition(": ")
    keys = (*prefix, *key.split("."))
    line = toml_key_line(text, keys) if colon and _KEY_PATH.fullmatch(key) else None
    return exc if line is None else ConfigError(f"{path}:{line}: {'.'.join(keys)}: {what}")


def load_policy_file(path: Path) -> Policy:
    """A policy file, or the ``[tool.tsum.policy]`` table of a ``pyproject.toml``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read policy ({exc})") from None
    source = str(path)
    prefix: tuple[str, ...] = ()  # where the policy table is: a pyproject holds it deeper
    if path.name == "pyproject.toml":
        source, prefix = f"{path} [tool.tsum.policy]", ("tool", "tsum", "policy")
    try:
        if prefix:
            table = loads_toml(text, str(path)).get("tool", {}).get("tsum", {}).get("policy")
            if table is None:
                raise ConfigError(f"{path}: no [tool.tsum.policy] table")
            policy = policy_from_table(table, source, default_name="pyproject")
        else:
            policy = parse_policy(text, source, default_name=path.stem)
        from .prompt import builtin_template_names

        if policy.summary.template not in builtin_template_names():
            # a policy file may come from a pull request (transcript_tools/untrusted.py)
            check_file_path(source, "summary.template", policy.summary.template)
    except ConfigError as exc:
        raise _at_line(exc, source, str(path), text, prefix) from None
    return policy


def plugin_policies() -> dict[str, Policy]:
    """The policies of installed ``tsum.policies`` plug-ins by name. An entry point gives a
    ``Policy``, or the path of a policy file (read as ``--policy FILE`` reads one); the
    policy carries the entry point's name, as the records name it."""
    found: dict[str, Policy] = {}
    for name, value in load_entry_points(POLICIES_GROUP, "policy plug-in", preset_names()).items():
        where = f"policy plug-in {name!r} ({POLICIES_GROUP})"
        if isinstance(value, Policy):
            policy = value
        elif isinstance(value, str | os.PathLike):
            policy = load_policy_file(Path(value))
        else:
            raise ConfigError(f"{where}: gives a {type(value).__name__}, not a Policy nor a path")
        if policy.name != name:
            raise ConfigError(f"{where}: its policy is named {policy.name!r}")
        found[name] = policy
    return found


def resolve_policy(spec: str) -> Policy:
    """``--policy FILE|NAME``: a preset's name, else a policy file (or a pyproject.toml),
    else an installed plug-in's policy."""
    if spec in preset_names():
        return preset(spec)
    path = Path(spec)
    if path.is_file():
        return load_policy_file(path)
    plugins = plugin_policies()
    if spec in plugins:
        return plugins[spec]
    known = ", ".join([*preset_names(), *plugins])
    raise ConfigError(f"policy {spec!r}: not a preset ({known}) nor a file")


# TOML basic-string escapes: quotes, backslashes and control characters
_TOML_ESCAPES = {code: f"\\u{code:04X}" for code in [*range(0x20), 0x7F]} | {
    ord(char): "\\" + letter for char, letter in zip('"\\\b\t\n\f\r', '"\\btnfr', strict=True)
}


def _toml_string(text: str) -> str:
    """A TOML basic string."""
    return '"' + text.translate(_TOML_ESCAPES) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # shortest round-tripping form; TOML reads 1e-05 and 0.75 alike
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_string(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def to_toml(policy: Policy) -> str:
    """The whole policy as TOML, every key written (``tsum policies show``)."""
    lines = [
        f"name = {_toml_string(policy.name)}",
        f"description = {_toml_string(policy.description)}",
        f"runtime = {_toml_string(policy.runtime)}",
    ]
    for part in PARTS:
        lines += ["", f"[{part}]"]
        value = getattr(policy, part)
        lines += [f"{key} = {_toml_value(getattr(value, key))}" for key in part_fields(part)]
    return "\n".join(lines) + "\n"


def trigger_summary(policy: Policy) -> str:
    """One line saying when the policy acts (``tsum policies list``)."""
    t, p = policy.trigger, policy.prepass
    unit = f"per {t.unit}"
    parts = []
    if p.kind != "none":
        when = "always"
        if p.trigger_tokens:
            when = f"view >= {p.trigger_tokens:,} tokens"
        elif p.trigger_ratio:
            when = f"view >= window x {p.trigger_ratio:g}"
        if p.min_results:
            when += f", > {p.min_results} tool results"
        parts.append(f"clear tool results ({when})")
    if t.threshold is not Threshold.NEVER:
        size = "view" if t.measure is TriggerMeasure.CURRENT else t.measure.value
        reserve = f"window - {t.reserve_tokens:,}"
        if t.reserve_ratio:
            reserve = f"window x {1 - t.reserve_ratio:g} - {t.reserve_tokens:,}"
        if t.threshold is Threshold.RATIO:
            rule = f"{size} >= window x {t.ratio:g}"
            if t.floor_tokens or t.ceiling_tokens:
                ceiling = f"{t.ceiling_tokens:,}" if t.ceiling_tokens else "inf"
                rule += f" in [{t.floor_tokens:,}, {ceiling}]"
            if t.reserve_tokens or t.reserve_ratio:
                rule += f" or >= {reserve}"
        elif t.threshold is Threshold.TOKENS:
            rule = f"{size} >= {t.tokens:,}"
        elif t.threshold is Threshold.RESERVE:
            rule = f"{size} >= {reserve}"
        elif t.threshold is Threshold.EVERY:
            rule = f"every {t.every} {t.unit}s"
        else:
            rule = f"view >= {t.messages} messages"
        if t.debounce:
            rule += f", debounce {t.debounce}"
        parts.append(f"summarize ({rule})")
    return "; ".join(parts) + f", {unit}"

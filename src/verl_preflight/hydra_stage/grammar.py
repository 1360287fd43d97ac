"""Parse override strings with hydra-core's own grammar, once per distinct string.

The result is plain data (cached on disk with the config snapshots), so a warm
run does not need to load Hydra's ANTLR parser at all.
"""

from __future__ import annotations

import re

_PARSER = None

# Hydra's grammar is asked about an override whose value is partly unknown with this in place of
# the unknown parts: it parses as a plain word. It never leaves this module and the Hydra stage:
# every message is written back with what the script wrote (in_script_words).
_STANDIN = "unknown0"


def grammar_text(field) -> str | None:
    """The text Hydra's grammar is asked about for a launch argument (a shell.words.Field): the
    argument itself, or with each unknown piece of its value as a plain word; None when its key
    is not known (it cannot be checked)."""
    if field.known:
        return field.value
    key_part = field.pieces[0] if field.pieces else ""
    if not isinstance(key_part, str) or ("=" not in key_part and not key_part.startswith("~")):
        return None
    return "".join(p if isinstance(p, str) else _STANDIN for p in field.pieces)


def in_script_words(field, message: str) -> str:
    """A message of Hydra's about an argument, with what the script wrote in place of the stand-in."""
    text = grammar_text(field)
    if field.known or text is None:
        return message
    return message.replace(text, field.display).replace(_STANDIN, "...")


def _parser():
    global _PARSER
    if _PARSER is None:
        from hydra.core.override_parser.overrides_parser import OverridesParser

        _PARSER = OverridesParser.create()
    return _PARSER


def _kind(override) -> str:
    if override.is_delete():
        return "delete"
    if override.is_force_add():
        return "force_add"
    if override.is_add():
        return "add"
    return "change"


def _plain(value):
    """Hydra values as JSON data; anything else marks the value as not plain."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value, True
    if isinstance(value, list):
        items = [_plain(v) for v in value]
        return [v for v, _ in items], all(ok for _, ok in items)
    if isinstance(value, dict):
        items = {k: _plain(v) for k, v in value.items()}
        ok = all(isinstance(k, str) for k in value) and all(ok for _, ok in items.values())
        return {str(k): v for k, (v, _) in items.items()}, ok
    return str(value), False


def parse_one(text: str) -> dict:
    """{"ok": True, kind, key, package, sweep, value, has_value, value_kind} or {"ok": False, "error"}."""
    from hydra.errors import HydraException

    try:
        override = _parser().parse_override(text)
    except HydraException as err:
        return {"ok": False, "error": _first_line(str(err))}
    except Exception as err:  # the grammar can raise other errors on odd input
        return {"ok": False, "error": _first_line(str(err)) or type(err).__name__}
    sweep = override.is_sweep_override()
    record = {
        "ok": True,
        "kind": _kind(override),
        "key": override.key_or_group,
        "package": override.package,
        "sweep": sweep,
        "line": override.input_line,
    }
    if sweep:
        from hydra._internal.config_loader_impl import ConfigLoaderImpl
        from hydra.types import RunMode

        try:
            ConfigLoaderImpl.validate_sweep_overrides_legal([override], RunMode.RUN, True)
        except HydraException as err:
            record["sweep_error"] = _first_line(str(err))
        record.update(value=None, has_value=True, value_kind="sweep", plain=False)
        return record
    value = override.value()
    data, plain = _plain(value)
    kind = "dict" if isinstance(value, dict) else "list" if isinstance(value, list) else "primitive"
    record.update(
        value=data,
        has_value=override._value is not None if override.is_delete() else True,
        value_kind=kind,
        plain=plain,
    )
    return record


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


# `key=value`, `+key=value`, `++key=value` with a plain dotted key. Hydra's lexer reads what follows
# the first `=` in a mode of its own (VALUE_MODE of OverrideLexer.g4), so the value parses alike
# whatever the key: its record is parsed once per value text, and the key's part is this match's.
_PLAIN_KEY = re.compile(r"(\+\+|\+)?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)=(.*)", re.S)
_KINDS = {None: "change", "+": "add", "++": "force_add"}
_by_value: dict = {}  # value text -> the record of `k=<value>`, for this process


def _with_plain_key(text: str) -> dict | None:
    """The record of `text` from the parse of its value alone; None when that is not certain to
    be Hydra's (another form of key, or a value Hydra refuses: its message names the override)."""
    match = _PLAIN_KEY.fullmatch(text)
    if match is None:
        return None
    prefix, key, value = match.groups()
    base = _by_value.get(value)
    if base is None:
        base = _by_value[value] = parse_one("k=" + value)
    if not base["ok"] or base["sweep"]:
        return None
    return {**base, "kind": _KINDS[prefix], "key": key, "line": text}


def parse_all(texts, memo: dict) -> list[dict]:
    """Parse each override, reusing and filling `memo` (the cache's table)."""
    out = []
    for text in texts:
        rec = memo.get(text)
        if rec is None:
            rec = _with_plain_key(text) or parse_one(text)
            memo[text] = rec
        out.append(rec)
    return out

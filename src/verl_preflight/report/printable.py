"""What a report prints of a script is data: its secrets masked, its control characters escaped.

A script's text reaches reports (an override's value in a message, a path, a profile's
value). Two things must never follow it there:

- Secrets: the values of variables whose names look like secrets (`HF_TOKEN`, `*SECRET*`,
  `*PASSWORD*`, `*KEY*`, `*_PAT`) and whose values look like credentials (a known token prefix,
  or a long random word: shell.evaluate.secret_values) are printed as `***` wherever they stand
  as a whole value, in every format, unless the user asks to see them (--show-secrets); text
  inside another word or key is never touched.
  CI logs keep what `--format github` prints.
- Control characters: an escape sequence in a value (`$'\\e]0;title\\a'`, `\\e[2J`) would retitle
  or clear the terminal of whoever reads the report; a newline in a message would forge a
  line (in `--format github` a workflow command). They are written as `\\xNN` / `\\uNNNN`
  escapes in text formats, and as JSON's `\\uNNNN` in JSON and SARIF (the same data,
  nothing raw on a terminal). Bidirectional overrides (U+202A-202E, U+2066-2069) too.
"""

from __future__ import annotations

from functools import lru_cache

MASK = "***"

# the characters never printed raw: C0 and C1 controls, DEL, the bidirectional marks and overrides
_BIDI = (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_UNSAFE = (*range(0x00, 0x20), *range(0x7F, 0xA0), *_BIDI)
_RAW_IN_JSON = (*range(0x7F, 0xA0), *_BIDI)  # json.dumps escapes the rest


def _escaped(ch: str) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_ESCAPES = {code: _escaped(chr(code)) for code in _UNSAFE}  # str.translate's table (no `re` to import)
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in _RAW_IN_JSON}


def escape(text: str) -> str:
    """`text` with every control character written as an escape (newlines and tabs too)."""
    return text.translate(_ESCAPES)


def secrets_of(results, show: bool = False) -> list[str]:
    """The values to mask in a report of `results` (none when the user asked to see them),
    longest first (a secret that holds another is masked whole)."""
    if show:
        return []
    found = set()
    for r in results:
        found |= set(getattr(r, "secrets", ()) or ())
    return sorted(found, key=lambda s: (-len(s), s))


def mask(text: str, secrets) -> str:
    """Each secret replaced by `***` where it stands as a whole value: not inside a longer word
    or key (a secret is a credential, never a piece of a key's name)."""
    for secret in secrets:
        if secret in text:
            text = _whole(secret).sub(MASK, text)
    return text


@lru_cache(maxsize=256)
def _whole(secret: str):
    import re

    return re.compile(rf"(?<![\w-]){re.escape(secret)}(?![\w-])")


def printed(output: str, fmt: str, secrets) -> str:
    """A report of format `fmt` as it is written: JSON documents (json, sarif) by for_json, text
    (text, github, render's) by for_terminal, keeping the text report's colour codes."""
    if fmt in ("json", "sarif"):
        return for_json(output, secrets)
    from .text import CODES  # text imports this module

    return for_terminal(output, secrets, keep=CODES)


def for_terminal(output: str, secrets, keep=()) -> str:
    """A text report as printed: secrets masked, control characters escaped except the
    newlines between lines and the report's own colour codes (`keep`)."""
    output = mask(output, secrets)
    if not keep:
        return "\n".join(escape(line) for line in output.split("\n"))
    pattern = _kept(tuple(keep))
    lines = []
    for line in output.split("\n"):
        pieces, at = [], 0
        for m in pattern.finditer(line):
            pieces += [escape(line[at : m.start()]), m.group()]
            at = m.end()
        lines.append("".join(pieces) + escape(line[at:]))
    return "\n".join(lines)


@lru_cache(maxsize=4)
def _kept(keep: tuple):
    import re

    return re.compile("|".join(re.escape(k) for k in sorted(keep, key=len, reverse=True)))


def for_json(output: str, secrets) -> str:
    """A JSON document as printed: secrets masked (as JSON spells them), the control
    characters json.dumps leaves raw written as `\\uNNNN` (the same document)."""
    for secret in secrets:
        spelled = _in_json(secret)
        if spelled in output:
            output = _whole(spelled).sub(MASK, output)
    return output.translate(_JSON_ESCAPES)


def _in_json(text: str) -> str:
    """`text` as a JSON string spells it, without its quotes (json imported only with a secret
    to mask: a warm start's report imports none)."""
    import json

    return json.dumps(text, ensure_ascii=False)[1:-1]

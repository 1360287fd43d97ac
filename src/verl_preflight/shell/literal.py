"""A word's literal text as bash reads it: quotes, backslashes, and where expansion begins.

Beside `Script.word_at` (parse.py): given the syntax node of a word, the characters it writes,
each with the bytes of the source that write it, up to the first part bash expands.
"""

from __future__ import annotations

_UNQUOTED_STOPS = frozenset(b"$`*?[]{}~'\"")  # unquoted text bash may expand, or the end of the literal part


def _char_len(lead: int) -> int:
    return 4 if lead >= 0xF0 else 3 if lead >= 0xE0 else 2 if lead >= 0xC0 else 1


def _literal(src: bytes, a: int, b: int, out: list, escapes: bytes | None) -> bool:
    """Read src[a:b] as bash would (`escapes`: what a backslash escapes; None: any character,
    as unquoted). Append (character, start, end, written as itself); False at text bash expands."""
    i = a
    while i < b:
        c = src[i]
        if c == 0x5C and i + 1 < b and (escapes is None or src[i + 1] in escapes):  # backslash
            if src[i + 1] == 0x0A:
                return False  # a line continuation: not a character
            n = _char_len(src[i + 1])
            out.append((src[i + 1 : i + 1 + n].decode("utf-8", "replace"), i, i + 1 + n, False))
            i += 1 + n
            continue
        if c in b"$`" or (escapes is None and c in _UNQUOTED_STOPS):
            return False
        n = _char_len(c)
        try:
            ch = src[i : i + n].decode("utf-8")
        except UnicodeDecodeError:
            return False
        out.append((ch, i, i + n, True))
        i += n
    return True


def literal_chars(script, node, out: list) -> bool:
    """The characters a word writes, in order, up to its first part that is not literal text
    (an expansion, a command substitution). True when the whole word is literal."""
    src = script.source
    kind = node.type
    if kind in ("word", "number"):
        return _literal(src, node.start_byte, node.end_byte, out, None)
    if kind == "raw_string":
        return _literal(src, node.start_byte + 1, node.end_byte - 1, out, b"")
    if kind == "string":
        pos = node.start_byte + 1
        for child in node.named_children:
            if child.type != "string_content":
                _literal(src, pos, child.start_byte, out, b'$`"\\\n')
                return False
        return _literal(src, pos, node.end_byte - 1, out, b'$`"\\\n')
    if kind == "concatenation":
        return all(literal_chars(script, child, out) for child in node.children)
    return False

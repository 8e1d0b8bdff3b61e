"""Readable token strings for display.

A byte-level BPE tokenizer (GPT-2, SmolLM2, Llama-3, Qwen) stores each token as a string of
stand-in characters, one per byte: `Ġ` is the byte of a space, `Ċ` a newline. A multi-byte
character such as an emoji may be split across two tokens, and neither half is valid UTF-8 on its
own. `readable_tokens` maps each token back to its bytes and shows:

- spaces as `␣`, newlines as `↵`, tabs as `⇥` (visible, so a learner sees where they are);
- a token whose bytes are not valid UTF-8 on their own as its bytes, e.g. `<F0><9F>`;
- never the replacement character `�`.

SentencePiece tokenizers (`▁` for a space, `<0xF0>` byte-fallback tokens) are handled the same way.
Deliberately left out: normalizers that change the text (lower-casing, NFKC): the display shows
the token the model saw, not the original characters.
"""

from __future__ import annotations

import codecs
import re
from functools import lru_cache

VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}
_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
_BYTES_ERRORS = "inside_transformer.show_bytes"


def _bytes_as_hex(err: UnicodeDecodeError) -> tuple[str, int]:
    """Decode error handler: each undecodable byte becomes `<NN>` (never the `�` character)."""
    return "".join(f"<{b:02X}>" for b in err.object[err.start:err.end]), err.end


codecs.register_error(_BYTES_ERRORS, _bytes_as_hex)


@lru_cache(maxsize=1)
def byte_decoder() -> dict[str, int]:
    """GPT-2's map from its printable stand-in characters back to byte values (256 entries).

    Example: byte_decoder()["Ġ"] -> 32
    """
    # The inverse of GPT-2's bytes_to_unicode: printable bytes map to themselves, the others to
    # code points from 256 upward, in order.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def token_bytes(piece: str, byte_level: bool) -> bytes:
    """The raw bytes a vocabulary entry stands for.

    Example: token_bytes("Ġcane", True) -> b" cane"; token_bytes("▁cane", False) -> b" cane"
    """
    if byte_level:
        dec = byte_decoder()
        return bytes(dec[ch] for ch in piece)
    m = _BYTE_FALLBACK.match(piece)
    if m:
        return bytes([int(m.group(1), 16)])
    return piece.replace("▁", " ").encode("utf-8")


def is_byte_level(pieces: list[str]) -> bool:
    """True when every character of every piece is one of GPT-2's byte stand-ins."""
    dec = byte_decoder()
    return all(ch in dec for p in pieces for ch in p)


def show_bytes(data: bytes) -> str:
    """Bytes as display text: UTF-8 with visible whitespace, invalid bytes as `<F0><9F>`.

    Example: show_bytes(b" a\\n") -> "␣a↵"; show_bytes(b" \\xf0\\x9f") -> "␣<F0><9F>"
    """
    text = data.decode("utf-8", errors=_BYTES_ERRORS)
    out = []
    for ch in text:
        if ch in VISIBLE:
            out.append(VISIBLE[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"<{ord(ch):02X}>")
        else:
            out.append(ch)
    return "".join(out)


def readable_tokens(tokenizer, ids: list[int]) -> list[str]:
    """Display strings for `ids`, one per token, following the rules in the module docstring.

    Special tokens (`<|endoftext|>`, `<s>`) are shown as they are.
    """
    pieces = tokenizer.convert_ids_to_tokens(list(ids))
    special = set(getattr(tokenizer, "all_special_tokens", []) or [])
    normal = [p for p in pieces if p not in special]
    byte_level = is_byte_level(normal)
    out = []
    for p in pieces:
        if p in special:
            out.append(p)
        else:
            try:
                out.append(show_bytes(token_bytes(p, byte_level)))
            except (KeyError, ValueError):
                out.append(p)
    return out


_HEX = re.compile(r"<[0-9A-F]{2}>")


def first_split_character(tokens: list[str], text: str, offsets) -> tuple[str, str] | None:
    """The first character of `text` that the tokens show as raw bytes (a letter cut across two
    tokens), with its bytes as the tokens write them; None if every token is whole characters.

    `tokens`: readable_tokens' strings; `offsets`: [T, 2] character spans into `text`.
    Example: for "si è" cut as ["si", "␣<C3>", "<A8>"] -> ("è", "<C3><A8>")
    """
    for i, tok in enumerate(tokens):
        if not _HEX.search(tok):
            continue
        start, end = (int(x) for x in offsets[i])
        for ch in text[start:end] or text[start:start + 1]:
            data = ch.encode("utf-8")
            if len(data) > 1 and not ch.isspace():
                return ch, "".join(f"<{b:02X}>" for b in data)
    return None

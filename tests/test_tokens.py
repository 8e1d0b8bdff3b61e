"""Readable token strings: byte-level markers made visible, split characters shown as bytes."""

import pytest

from lib.model.tokens import byte_decoder, readable_tokens, show_bytes, token_bytes


def test_byte_decoder_is_a_bijection_on_256_bytes():
    dec = byte_decoder()
    assert len(dec) == 256 and sorted(dec.values()) == list(range(256))
    assert dec["Ġ"] == 32 and dec["Ċ"] == 10 and dec["a"] == ord("a")


@pytest.mark.parametrize("data,shown", [
    (b" cane", "␣cane"),
    (b"a\nb\tc", "a↵b⇥c"),
    ("perché".encode(), "perché"),
    (b" \xf0\x9f", "␣<F0><9F>"),
    (b"\x90", "<90>"),
    (b"\x01", "<01>"),
    ("🐱".encode(), "🐱"),
])
def test_show_bytes(data, shown):
    assert show_bytes(data) == shown


def test_sentencepiece_pieces():
    assert token_bytes("▁cane", byte_level=False) == b" cane"
    assert token_bytes("<0xF0>", byte_level=False) == b"\xf0"


@pytest.mark.parametrize("text", ["Il gatto dorme.", "perché è così 🐱🚀", "中文 text\n\tend", "   spazi   "])
def test_readable_tokens_on_real_tokenizer(real, text):
    tok = real.tokenizer
    ids = tok(text)["input_ids"]
    shown = readable_tokens(tok, ids)
    assert len(shown) == len(ids)
    assert all("\ufffd" not in s for s in shown)
    # Concatenating the tokens' bytes gives the text back: nothing is lost in the display.
    pieces = tok.convert_ids_to_tokens(ids)
    assert b"".join(token_bytes(p, True) for p in pieces).decode("utf-8") == text
    if text.isascii():
        assert "".join(shown).replace("␣", " ").replace("↵", "\n").replace("⇥", "\t") == text


def test_the_first_split_character_is_found_with_its_bytes(real):
    from lib.model.capture import run_capture
    from lib.model.tokens import first_split_character

    cap = run_capture(real, "Il gatto si è seduto sul tappeto.")
    found = first_split_character(list(cap.tokens), cap.text, cap.offsets)
    assert found == ("è", "<C3><A8>")
    assert any("<C3>" in tok for tok in cap.tokens)  # SmolLM2 does cut «è» in two
    plain = run_capture(real, "The cat sat on the mat.")
    assert first_split_character(list(plain.tokens), plain.text, plain.offsets) is None

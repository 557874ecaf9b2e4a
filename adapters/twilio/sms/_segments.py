"""How many SMS segments a text takes, as carriers count them (3GPP TS 23.038).

A text in the GSM 7-bit alphabet fits 160 characters in one segment, 153 per segment when
it is split (the rest of each segment carries the header that joins them); the extension
characters `^{}\\[~]|€` and form feed take two. One character outside the alphabet turns the
whole text into UCS-2: 70 UTF-16 code units alone, 67 per segment when split (an emoji
takes two units). Spanish `é ñ ü ¿ ¡` are in the alphabet; `á í ó ú` are not, so most
Spanish texts are UCS-2.

    count("Picket lines at every school.")   -> Segments("GSM-7", 1, 29)
    count("Huelga en todas las escuelas: sí") -> Segments("UCS-2", 1, 32)
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

GSM_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
GSM_EXTENDED = frozenset("^{}\\[~]|€\f")

# Characters phones type that have a GSM-7 twin; sending the twin keeps a text in GSM-7
# (what Twilio calls Smart Encoding). Accented letters are left alone: they are the words.
SMART = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2026": "...",
        "\u00a0": " ",
        "\u200b": "",  # zero-width space (the core's mention guard; nothing pings by SMS)
        "\u2022": "-",
        "\t": " ",
    }
)


@dataclass(frozen=True, slots=True)
class Segments:
    encoding: str  # "GSM-7" or "UCS-2"
    count: int
    units: int  # septets (GSM-7) or UTF-16 code units (UCS-2)


def is_gsm(text: str) -> bool:
    return all(ch in GSM_BASIC or ch in GSM_EXTENDED for ch in text)


def count(text: str) -> Segments:
    """The segments `text` takes once sent. A split text is cut the way phones join it
    again: an extension character's two septets, or an emoji's two UTF-16 units, never
    straddle two segments (so a segment may hold one unit less)."""
    gsm = is_gsm(text)
    if gsm:
        widths = [2 if ch in GSM_EXTENDED else 1 for ch in text]
        single, joined, encoding = 160, 153, "GSM-7"
    else:
        widths = [len(ch.encode("utf-16-le")) // 2 for ch in text]
        single, joined, encoding = 70, 67, "UCS-2"
    units = sum(widths)
    if units <= single:
        return Segments(encoding, 1 if units else 0, units)
    segments, used = 1, 0
    for width in widths:
        if used + width > joined:
            segments, used = segments + 1, 0
        used += width
    return Segments(encoding, segments, units)


def fold_to_gsm(text: str) -> str:
    """`text` with each letter GSM-7 lacks written without its accent ("SÍ" -> "SI",
    "día" -> "dia"), where the plain letter is GSM-7; letters GSM-7 has ("é", "ñ", "ü")
    are kept. For our own sentences only, when their accents would cost a segment."""
    out = []
    for ch in text:
        if ch in GSM_BASIC or ch in GSM_EXTENDED:
            out.append(ch)
            continue
        base = "".join(c for c in unicodedata.normalize("NFD", ch) if not unicodedata.combining(c))
        out.append(base if base and is_gsm(base) else ch)
    return "".join(out)


def smart(text: str) -> str:
    """`text` with typographic punctuation replaced by its GSM-7 twin."""
    return text.translate(SMART)

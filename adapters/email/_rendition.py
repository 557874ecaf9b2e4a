"""An e-mail rendered once per message and language: `build_email` and the flattening run
once for everyone who reads the update in that language, and each person's copy is the
same bytes with their own parts filled in: the address (`To`), the `Message-ID`, the
`Date`, their unsubscribe link (`List-Unsubscribe` and the link in both parts) and their
preferences link (in both parts).

The header code stays `build_email`'s: it is called with slot markers in place of the
recipient's values, and those four headers are written again per person from the values
it gave, each on one line (an address, a message id, a date and a `<URL>` are never
folded; RFC 8058 wants the URL whole). The two parts are quoted-printable, encoded line
by line, so the lines holding the unsubscribe link are the only ones encoded per person.

Anything out of the ordinary (an address or token with characters outside the plain set,
a header the template could not place, a confirmation, whose body is one person's) makes
`fill` answer None, and the caller builds that person's e-mail the full way.
"""

from __future__ import annotations

import binascii
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.generator import BytesGenerator
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
from io import BytesIO

# The recipient's headers, written again per person.
PERSONAL = ("To", "Message-ID", "Date", "List-Unsubscribe")
# Values that may go into a copy as they are: ASCII letters, digits and a few marks, so
# nothing needs quoting, escaping (HTML) or encoding (headers, quoted-printable).
_ADDRESS = re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,190}")
_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,128}")
_SENTINEL_NOW = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)  # a date no message is sent at
_MAX_LINE = 998  # RFC 5322 2.1.1


@dataclass(frozen=True, slots=True)
class Marks:
    """The slot markers a template is built with: put `address` where the recipient's address
    goes, `key` in the Message-ID, `token` in the unsubscribe link and `prefs` in the
    preferences link, and build at `now`."""

    address: str
    key: str
    token: str
    prefs: str = ""  # in the preferences link
    now: datetime = _SENTINEL_NOW

    @property
    def texts(self) -> tuple[str, ...]:
        """The marks standing for a recipient's value in any text."""
        return (self.address, self.key, self.token, self.prefs)

    @classmethod
    def new(cls) -> Marks:
        mark = "zslot" + secrets.token_hex(8)
        return cls(
            address=f"{mark}@slot.invalid", key=mark + "k", token=mark + "t", prefs=mark + "p"
        )


@dataclass(frozen=True, slots=True)
class _Header:
    """A recipient's header: `name: value` with the marks in `value` replaced."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class _Line:
    """A line of a part holding the unsubscribe token, encoded per person."""

    text: str


Piece = bytes | _Header | _Line


@dataclass(frozen=True, slots=True)
class Rendition:
    """One e-mail as bytes for everyone reading it, with the recipient's parts as gaps."""

    pieces: tuple[Piece, ...]
    marks: Marks

    def fill(
        self, address: str, key: str, token: str, now: datetime, prefs: str = ""
    ) -> bytes | None:
        """This person's copy, or None when their values cannot go in as they are."""
        if not (_ADDRESS.fullmatch(address) and _TOKEN.fullmatch(key) and _TOKEN.fullmatch(token)):
            return None
        m = self.marks
        if m.prefs and not _TOKEN.fullmatch(prefs) and self._holds(m.prefs):
            return None  # a preferences link but none of their own: built for them alone
        swaps = (
            (m.address, address),
            (m.key, key),
            (m.token, token),
            *(((m.prefs, prefs),) if m.prefs else ()),
            (format_datetime(m.now), format_datetime(now)),
        )
        out: list[bytes] = []
        for piece in self.pieces:
            if isinstance(piece, bytes):
                out.append(piece)
                continue
            text = piece.value if isinstance(piece, _Header) else piece.text
            for mark, value in swaps:
                text = text.replace(mark, value)
            if isinstance(piece, _Header):
                line = f"{piece.name}: {text}\r\n".encode("ascii")
                if len(line) > _MAX_LINE + 2:
                    return None
                out.append(line)
            else:
                out.append(quoted_printable(text))
        return b"".join(out)

    def _holds(self, mark: str) -> bool:
        return any(
            mark in (p.value if isinstance(p, _Header) else p.text)
            for p in self.pieces
            if not isinstance(p, bytes)
        )


def quoted_printable(text: str) -> bytes:
    """`text` (whole lines) as quoted-printable UTF-8 with CRLF line ends."""
    return binascii.b2a_qp(text.encode("utf-8"), istext=True).replace(b"\n", b"\r\n")


def rendition(mail: EmailMessage, marks: Marks) -> Rendition | None:
    """`mail` (built with `marks`) as a `Rendition`, or None if it does not have the shape
    one needs (every personal header once, ASCII; two quoted-printable text parts)."""
    flat = _flatten(mail)
    head, separator, body = flat.partition(b"\r\n\r\n")
    headers = _personal_headers(head, mail, marks)
    parts = _parts(body, mail, marks)
    if headers is None or parts is None or not separator:
        return None
    return Rendition((*headers, b"\r\n", *parts), marks)


def _flatten(mail: EmailMessage) -> bytes:
    """What aiosmtplib sends for `mail` (`flatten_message`: the SMTP policy, CRLF)."""
    with BytesIO() as out:
        BytesGenerator(out, policy=SMTP).flatten(mail)
        return out.getvalue()


def _personal_headers(head: bytes, mail: EmailMessage, marks: Marks) -> list[Piece] | None:
    """The header block with each personal header as a gap holding the value `build_email`
    gave it (folded lines joined), each holding its mark; no mark anywhere else."""
    expected = {
        "To": marks.address,
        "Message-ID": marks.key,
        "Date": format_datetime(marks.now),
        "List-Unsubscribe": marks.token,
    }
    pieces: list[Piece] = []
    seen: set[str] = set()
    for line in re.split(rb"\r\n(?![ \t])", head):
        name = line.split(b":", 1)[0].decode("ascii", "replace")
        if name not in PERSONAL:
            if any(mark.encode() in line for mark in marks.texts):
                return None
            pieces.append(line + b"\r\n")
            continue
        value = str(mail[name])
        plain = value.isascii() and not any(c in value for c in "\r\n")
        if name in seen or not plain or expected[name] not in value:
            return None
        seen.add(name)
        pieces.append(_Header(name, value))
    wanted = {n for n in PERSONAL if mail[n] is not None}
    return pieces if seen == wanted and {"To", "Message-ID", "Date"} <= seen else None


def _parts(body: bytes, mail: EmailMessage, marks: Marks) -> list[Piece] | None:
    """The multipart body with each text part re-encoded line by line: lines holding the
    token become gaps, the others bytes."""
    boundary = mail.get_boundary()
    if boundary is None:
        return None
    delimiter = b"--" + boundary.encode("ascii")
    chunks = body.split(delimiter)
    parts = list(mail.iter_parts())
    # preamble, one chunk per part, then the closing "--" and epilogue
    if len(chunks) != len(parts) + 2:
        return None
    pieces: list[Piece] = [chunks[0]]
    for chunk, part in zip(chunks[1:-1], parts, strict=True):
        headers, separator, _encoded = chunk.partition(b"\r\n\r\n")
        if not separator or part.get("Content-Transfer-Encoding") != "quoted-printable":
            return None
        pieces += [delimiter, headers, b"\r\n\r\n"]
        text = part.get_content()
        for line in text.splitlines(keepends=True):
            personal = any(mark in line for mark in marks.texts)
            pieces.append(_Line(line) if personal else quoted_printable(line))
        pieces.append(b"\r\n")  # the CRLF before the next delimiter belongs to it
    pieces += [delimiter, chunks[-1]]
    return _joined(pieces)


def _joined(pieces: list[Piece]) -> list[Piece]:
    """Adjacent bytes as one (fewer pieces to join per person)."""
    out: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, bytes) and out and isinstance(out[-1], bytes):
            out[-1] += piece
        else:
            out.append(piece)
    return out


class Renditions:
    """The renditions of the messages being sent now, by what they depend on (the message,
    the reader's language for the link, the colour); the oldest dropped beyond `size`."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._kept: OrderedDict[Hashable, Rendition | None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def clear(self) -> None:
        self._kept.clear()

    def get(self, key: Hashable, make: Callable[[], Rendition | None]) -> Rendition | None:
        if key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key]
        made = self._kept[key] = make()
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)
        return made

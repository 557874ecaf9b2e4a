"""`/favicon.ico`: the page's icon, a 16 x 16 picket sign in the strike's red (about a
kilobyte), built here as bytes so no binary file is committed, and cached a week.

Browsers ask for `/favicon.ico` whatever the page says; without it every visit logged a 404.
"""

from __future__ import annotations

import hashlib
import struct

from aiohttp import web

SIZE = 16
RED, WHITE, CLEAR = (0x2E, 0x10, 0xC8, 0xFF), (0xFF, 0xFF, 0xFF, 0xFF), (0, 0, 0, 0)  # BGRA
MAX_AGE = 7 * 24 * 3600  # it never changes between releases
PATH = "/favicon.ico"


def _pixel(x: int, y: int) -> tuple[int, int, int, int]:
    """A red sign (rows 1-9) on a white pole (rows 10-15), drawn from the top."""
    if 1 <= y <= 9 and 1 <= x <= 14:
        return WHITE if (y in (4, 6) and 4 <= x <= 11) else RED
    if y >= 10 and 7 <= x <= 8:
        return RED
    return CLEAR


def icon() -> bytes:
    """An ICO holding one 32-bit BMP image (rows stored bottom up, an empty AND mask)."""
    pixels = b"".join(bytes(_pixel(x, y)) for y in reversed(range(SIZE)) for x in range(SIZE))
    mask = bytes(4 * SIZE)  # 32 bits a row, all opaque: the alpha channel decides
    header = struct.pack("<IiiHHIIiiII", 40, SIZE, SIZE * 2, 1, 32, 0, len(pixels), 0, 0, 0, 0)
    image = header + pixels + mask
    directory = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(image), 6 + 16)
    return directory + entry + image


ICON = icon()
ETAG = f'"{hashlib.sha256(ICON).hexdigest()[:16]}"'


async def serve(request: web.Request) -> web.Response:
    headers = {"Cache-Control": f"public, max-age={MAX_AGE}, immutable", "ETag": ETAG}
    if ETAG in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    return web.Response(body=ICON, content_type="image/x-icon", headers=headers)


def add_routes(app: web.Application) -> None:
    app.router.add_get(PATH, serve)

"""Tray icons drawn with Pillow from the shipped artwork (resources/glyph.png, the π mark).

States: idle (nothing pending), working (a session is busy), needs (with the count as a badge,
1–9 then 9+), snoozed, and abandoned (questions left behind by pi processes that died).
Drawn at the requested size (not scaled down from a big bitmap) so they stay crisp at 16–64 px.
"""

from __future__ import annotations

import functools
import io
from typing import Literal

from PIL import Image, ImageDraw, ImageFont

from notifier import resources

IconState = Literal["idle", "working", "needs", "snoozed", "abandoned"]

COLORS: dict[str, tuple[int, int, int, int]] = {
    "idle": (74, 85, 104, 255),  # slate
    "working": (38, 110, 200, 255),  # blue
    "needs": (214, 48, 49, 255),  # red
    "snoozed": (120, 120, 120, 255),  # grey
    "abandoned": (176, 122, 28, 255),  # amber
}
BADGE = (255, 255, 255, 255)
BADGE_TEXT = (190, 30, 30, 255)


@functools.lru_cache(maxsize=4)
def _glyph(size: int) -> Image.Image:
    with Image.open(io.BytesIO(resources.read_bytes("glyph.png"))) as img:
        base: Image.Image = img.convert("RGBA")
    lanczos = getattr(Image, "Resampling", Image).LANCZOS  # Image.Resampling: Pillow ≥ 9.1
    return base.resize((size, size), lanczos)


@functools.lru_cache(maxsize=16)
def _font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in ("DejaVuSans-Bold.ttf", "Arial Bold.ttf", "arialbd.ttf", "Helvetica-Bold.ttf"):
        try:
            return ImageFont.truetype(name, px)
        except OSError:
            continue
    try:
        return ImageFont.load_default(size=px)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def badge_text(count: int) -> str:
    return "9+" if count > 9 else str(max(count, 0))


@functools.lru_cache(maxsize=64)
def render(state: IconState, count: int = 0, size: int = 64) -> Image.Image:
    """The tray image for ``state``; ``count`` is shown as a badge in the ``needs`` state."""
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    pad = max(1, size // 32)
    d.rounded_rectangle(
        (pad, pad, size - 1 - pad, size - 1 - pad), radius=max(2, size // 5), fill=COLORS[state]
    )
    if state == "needs" and count > 0 and size < 24:
        # Too small for mark and badge: the count alone, as large as it fits.
        text = badge_text(count)
        font = _font(max(7, int(size * (0.85 if len(text) == 1 else 0.62))))
        d.text((size / 2, size / 2 + 0.5), text, fill=BADGE, font=font, anchor="mm")
        return img
    mark = int(size * 0.78)
    offset = (size - mark) // 2
    img.alpha_composite(_glyph(mark), (offset - (size // 10 if state == "needs" else 0), offset + size // 16))
    if state == "needs" and count > 0:
        text = badge_text(count)
        r = max(5, int(size * (0.26 if len(text) == 1 else 0.30)))
        cx, cy = size - r - 1, r + 1
        d.ellipse(
            (cx - r, cy - r, cx + r, cy + r), fill=BADGE, outline=COLORS["needs"], width=max(1, size // 32)
        )
        font = _font(max(7, int(r * (1.45 if len(text) == 1 else 1.1))))
        d.text((cx, cy + 1), text, fill=BADGE_TEXT, font=font, anchor="mm")
    elif state == "snoozed":
        r = max(4, size // 5)
        cx, cy = size - r - 1, r + 1
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=BADGE)
        d.text((cx, cy + 1), "z", fill=COLORS["snoozed"], font=_font(max(7, int(r * 1.5))), anchor="mm")
    elif state == "abandoned":
        w = max(1, size // 16)
        d.rounded_rectangle(
            (pad, pad, size - 1 - pad, size - 1 - pad),
            radius=max(2, size // 5),
            outline=(255, 214, 102, 255),
            width=w,
        )
    return img


WORKING_RECENT_S = 600.0  # "working": a session in that state that changed within this (10 minutes)


def state_for(pending: int, abandoned: int, working: bool, snoozed: bool) -> IconState:
    """Which icon the tray shows: while everything is snoozed, the snooze (grey, "z"; the count
    is in the tooltip): a red icon would ask for what the user chose not to hear yet. Otherwise
    needs-answer wins until every live question is resolved."""
    if snoozed:
        return "snoozed"
    if pending:
        return "needs"
    if abandoned:
        return "abandoned"
    return "working" if working else "idle"

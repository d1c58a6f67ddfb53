"""Draws pi-notifier's base artwork (run once; the PNGs are committed in notifier/resources/, which
the wheel ships).

glyph.png       the π mark, white on transparent, 256×256: the tray icons are composed from it
pi-notifier.png the application icon (notifications, window, autostart entries)
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parents[1] / "notifier" / "resources"
S = 256


def glyph() -> Image.Image:
    img = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    white = (255, 255, 255, 255)
    # the bar, slightly curved up at the left like a handwritten π
    d.rounded_rectangle((38, 62, 218, 98), radius=18, fill=white)
    # left leg, leaning out at the foot
    d.polygon([(84, 90), (118, 90), (104, 186), (64, 206), (56, 192), (78, 170)], fill=white)
    # right leg with a small foot
    d.rounded_rectangle((146, 90, 180, 182), radius=14, fill=white)
    d.rounded_rectangle((150, 168, 210, 200), radius=16, fill=white)
    return img


def app_icon(mark: Image.Image) -> Image.Image:
    img = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((8, 8, S - 8, S - 8), radius=56, fill=(33, 41, 54, 255))
    d.ellipse((176, 12, 244, 80), fill=(229, 72, 77, 255), outline=(33, 41, 54, 255), width=8)
    img.alpha_composite(mark.resize((200, 200), Image.LANCZOS), (28, 36))
    return img


if __name__ == "__main__":
    mark = glyph()
    mark.save(HERE / "glyph.png")
    app_icon(mark).save(HERE / "pi-notifier.png")
    print("wrote", HERE / "glyph.png", HERE / "pi-notifier.png")

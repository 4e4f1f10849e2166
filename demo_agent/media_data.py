"""Pictures and sounds in pure Python: a small PNG bar chart and a WAV chime to send, and a look inside what comes in.

Writing: :func:`bar_chart_png` (``zlib`` + ``struct``, RGB, no dependencies) and :func:`chime_wav` (``wave``).
Reading: :func:`image_size` (PNG ``IHDR``, GIF header, JPEG ``SOF``) and :func:`wav_info`, for the agent's
acknowledgement of a prompt's attachments.
"""

from __future__ import annotations

import io
import math
import struct
import wave
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Bar colours (indigo, sky, emerald, amber, rose, violet) and the chart's background/grid/axis.
_PALETTE = [(99, 102, 241), (14, 165, 233), (16, 185, 129), (245, 158, 11), (244, 63, 94), (139, 92, 246)]
_SKY_TOP, _SKY_BOTTOM = (224, 231, 255), (248, 250, 252)
_GRID, _AXIS = (203, 213, 225), (71, 85, 105)


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    r, g, bl = (round(x + (y - x) * t) for x, y in zip(a, b, strict=True))
    return r, g, bl


def png_bytes(width: int, height: int, rgb: bytes | bytearray) -> bytes:
    """Encode ``width`` × ``height`` RGB pixels (row by row, 3 bytes each) as a PNG file."""
    if len(rgb) != width * height * 3:
        raise ValueError(f"expected {width * height * 3} bytes of RGB, got {len(rgb)}")
    stride = width * 3
    raw = b"".join(b"\x00" + bytes(rgb[y * stride : (y + 1) * stride]) for y in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def bar_chart_png(values: Sequence[int], width: int = 200, height: int = 120) -> bytes:
    """A bar chart of ``values`` on a soft gradient with grid lines; each bar shaded and its top rounded."""
    pixels = bytearray(width * height * 3)

    def put(x: int, y: int, color: tuple[int, int, int]) -> None:
        if 0 <= x < width and 0 <= y < height:
            pixels[(y * width + x) * 3 : (y * width + x) * 3 + 3] = bytes(color)

    for y in range(height):
        row = bytes(_mix(_SKY_TOP, _SKY_BOTTOM, y / max(height - 1, 1))) * width
        pixels[y * width * 3 : (y + 1) * width * 3] = row
    margin, top, base = 14, 12, height - 14
    for y in range(base - 20, top - 1, -20):
        for x in range(margin, width - margin, 2):  # dotted
            put(x, y, _GRID)
    bars = list(values) or [1]
    peak = max(max(bars), 1)
    slot = (width - 2 * margin) / len(bars)
    bar_width = max(2, round(slot * 0.62))
    for index, value in enumerate(bars):
        color = _PALETTE[index % len(_PALETTE)]
        left = round(margin + index * slot + (slot - bar_width) / 2)
        bar_top = base - max(2, round((base - top) * max(value, 0) / peak))
        for y in range(bar_top, base):
            shade = _mix(_mix(color, (255, 255, 255), 0.35), color, (y - bar_top) / max(base - bar_top, 1))
            inset = 2 if y == bar_top else 1 if y == bar_top + 1 else 0  # rounded top corners
            for x in range(left + inset, left + bar_width - inset):
                put(x, y, shade)
    for x in range(margin - 4, width - margin + 4):
        put(x, base, _AXIS)
    return png_bytes(width, height, pixels)


def chime_wav(seconds: float = 1.0, rate: int = 11_025) -> bytes:
    """A soft three-note chime (A5, C♯6, E6) with decaying bells, as 16-bit mono WAV."""
    notes = [(880.0, 0.0), (1108.73, 0.14), (1318.51, 0.28)]
    count = round(seconds * rate)
    samples = []
    for i in range(count):
        t = i / rate
        value = 0.0
        for freq, start in notes:
            if t >= start:
                u = t - start
                envelope = math.exp(-u * 5.5) * min(1.0, u / 0.004)  # 4 ms attack: no click
                value += envelope * (math.sin(2 * math.pi * freq * u) + 0.3 * math.sin(4 * math.pi * freq * u))
        fade = min(1.0, (count - i) / (rate * 0.05))  # 50 ms fade-out at the end
        samples.append(round(max(-1.0, min(1.0, value * 0.3 * fade)) * 32767))
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(struct.pack(f"<{len(samples)}h", *samples))
    return out.getvalue()


# -- reading ----------------------------------------------------------------------------------------

_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def image_size(data: bytes) -> tuple[str, int, int] | None:
    """``(format, width, height)`` read from a PNG, GIF or JPEG header; ``None`` for anything else."""
    if data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return "PNG", width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return "GIF", width, height
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[str, int, int] | None:
    i = 2
    while i + 9 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return "JPEG", width, height
        if marker == 0x01 or 0xD0 <= marker <= 0xD9:  # markers without a length
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        i += 2 + length
    return None


@dataclass(frozen=True, slots=True)
class WavInfo:
    channels: int
    rate: int
    bits: int
    seconds: float


def wav_info(data: bytes) -> WavInfo | None:
    """Channels, sample rate, bits and duration of a WAV file; ``None`` if it is not one."""
    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            rate = wav.getframerate()
            return WavInfo(wav.getnchannels(), rate, wav.getsampwidth() * 8, wav.getnframes() / rate if rate else 0.0)
    except (wave.Error, EOFError, struct.error):
        return None


def human_size(size: int) -> str:
    """``512 B``, ``3.1 KB``, ``1.2 MB`` (powers of 1024)."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"

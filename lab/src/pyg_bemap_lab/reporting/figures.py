r"""How a report's figure is written: a PNG of at most 256 colours, which
its few line and marker colours and their blends fill without a visible
change, at about a third of the bytes of a full-colour one (the stored
reports' plots are part of the repository)."""

import io
from typing import Any


def save_png(fig: Any, path: str, dpi: int) -> None:
    r"""Writes the :class:`matplotlib.figure.Figure` :obj:`fig` to
    :obj:`path` at :obj:`dpi` dots per inch, in a palette of 256 colours
    (median cut, no dithering)."""
    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format='png', dpi=dpi)
    buffer.seek(0)
    with Image.open(buffer) as image:
        paletted = image.convert('RGB').quantize(
            256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
    paletted.save(path, format='PNG', optimize=True)

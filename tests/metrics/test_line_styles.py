import itertools

from matplotlib.colors import to_rgb

from pyg_bemap.metrics import LINE_STYLES


def lightness(colour: str) -> float:
    red, green, blue = to_rgb(colour)
    return 0.299 * red + 0.587 * green + 0.114 * blue  # as greyscale prints


def test_every_style_differs_in_marker_line_and_greyscale_lightness():
    markers, lines, colours = zip(*LINE_STYLES)
    assert len(set(markers)) == len(set(lines)) == len(LINE_STYLES)
    for a, b in itertools.combinations(colours, 2):
        assert abs(lightness(a) - lightness(b)) > 0.15

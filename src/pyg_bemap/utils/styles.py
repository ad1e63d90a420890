r"""The line styles of the package's plots."""

#: The marker, line style and colour of each curve of a plot, in turn. The
#: colours are Paul Tol's high-contrast scheme and black, of distinct
#: lightness, so curves stay apart in greyscale and for colour-blind
#: readers.
LINE_STYLES = [
    ('o', '-', '#004488'),
    ('s', '--', '#DDAA33'),
    ('^', ':', '#BB5566'),
    ('D', '-.', '#000000'),
]

r"""Per-epoch validation curves of many runs in one compressed file.

A run's curves are lists of numbers rounded to five decimals (see
:func:`~pyg_bemap_lab.running.training.train_run`). A file stores each as
integers, :math:`\mathrm{round}(10^5 v)` (NaN as the integer type's
smallest value), in one little-endian array per metric, compressed with
xz; dividing by :math:`10^5` gives back the very floats that were stored
(the writer checks it and refuses a curve it cannot keep exactly).

The file is an xz stream of one JSON line (the format, the runs' keys and,
per metric, its integer type and each run's length, -1 where a run lacks
the metric) followed by the arrays in the order of that line's metrics.
"""

import json
import lzma
import math
import os
from collections.abc import Mapping

import numpy as np

FORMAT = 'pyg-bemap curves 1'
SCALE = 10**5
#: xz at its strongest: a store's curves are written once a command ends.
_FILTERS = [{'id': lzma.FILTER_LZMA2, 'preset': 9 | lzma.PRESET_EXTREME}]

Curve = dict[str, list[float]]


def write_curves(path: str, curves: Mapping[str, Curve]) -> None:
    r"""Writes :obj:`curves` (run key -> metric -> values) to :obj:`path`,
    replacing it only once the new file is whole.

    Raises:
        ValueError: If a value is not NaN and not a number with at most
            five decimals (it could not be read back exactly).
    """
    keys = sorted(curves)
    metrics = sorted({m for key in keys for m in curves[key]})
    header: dict = {'format': FORMAT, 'keys': keys, 'metrics': {}}
    arrays = []
    for metric in metrics:
        lengths = [len(curves[k].get(metric, ())) for k in keys]
        encoded = [_encode(v) for k in keys for v in curves[k].get(metric, ())]
        nan = np.array([v is None for v in encoded], dtype=bool)
        values = np.array([v or 0 for v in encoded], dtype=np.int64)
        dtype = np.dtype('<i4' if _fits_int32(values) else '<i8')
        values = np.where(nan, np.iinfo(dtype).min, values).astype(dtype)
        header['metrics'][metric] = {
            'dtype': values.dtype.str,
            'lengths': [
                n if metric in curves[k] else -1 for n, k in zip(lengths, keys)
            ],
        }
        arrays.append(values.tobytes())
    payload = json.dumps(header, separators=(',', ':')).encode() + b'\n'
    replace_file(
        path, lzma.compress(payload + b''.join(arrays), filters=_FILTERS)
    )


def replace_file(path: str, data: bytes) -> None:
    r"""Writes :obj:`data` to :obj:`path`, replacing the file only once
    the new one is whole on disk."""
    temporary = f'{path}.part'
    with open(temporary, 'wb') as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def read_curves(path: str) -> dict[str, Curve]:
    r"""The curves :func:`write_curves` wrote to :obj:`path`, by run key."""
    with open(path, 'rb') as handle:
        raw = lzma.decompress(handle.read())
    line, _, body = raw.partition(b'\n')
    header = json.loads(line)
    if header.get('format') != FORMAT:
        raise ValueError(f'{path}: not a file of curves ({FORMAT!r})')
    keys = header['keys']
    curves: dict[str, Curve] = {key: {} for key in keys}
    offset = 0
    for metric, spec in header['metrics'].items():
        lengths = np.array(spec['lengths'], dtype=np.int64)
        dtype = np.dtype(spec['dtype'])
        count = int(lengths.clip(min=0).sum())
        values = np.frombuffer(body, dtype, count, offset).astype(np.int64)
        offset += count * dtype.itemsize
        nan = values == np.iinfo(dtype).min
        floats = np.where(nan, np.nan, values / SCALE)
        ends = np.cumsum(lengths.clip(min=0))
        for key, n, end in zip(keys, lengths, ends):
            if n >= 0:
                curves[key][metric] = floats[end - n : end].tolist()
    return curves


def _encode(value: float) -> int | None:
    # None for NaN; the value times 10^5, which must be an integer
    if math.isnan(value):
        return None
    scaled = round(value * SCALE) if math.isfinite(value) else None
    if scaled is None or scaled / SCALE != value or abs(scaled) >= 2**62:
        raise ValueError(
            f'a curve value {value!r} is not a number of at most five '
            'decimals; round curves with round(v, 5) before storing them'
        )
    return scaled


def _fits_int32(values: np.ndarray) -> bool:
    # the smallest int32 is kept free: it marks NaN
    limit = np.iinfo(np.int32)
    return values.size == 0 or (
        values.min() > limit.min and values.max() <= limit.max
    )

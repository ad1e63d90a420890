import json
import math

import pytest

from pyg_bemap_lab.io.curves import read_curves, write_curves

NAN = float('nan')


def _same(a, b) -> bool:
    # NaN is stored as NaN: compare the JSON texts
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_curves_come_back_exactly(tmp_path):
    curves = {
        'b': {'loss': [0.69315, 0.5, -1.25], 'auc': [NAN, 0.99999, 1.0]},
        'a': {'loss': [123456.78901]},  # beyond int32 once scaled: int64
        'c': {'loss': [], 'pos': [0.0, 1e-05]},
    }
    path = str(tmp_path / 'curves.xz')
    write_curves(path, curves)
    back = read_curves(path)
    assert _same(back, curves)
    assert 'auc' not in back['a'] and back['c']['loss'] == []
    assert math.isnan(back['b']['auc'][0])
    # one content, one file: nothing in it depends on when it was written
    first = (tmp_path / 'curves.xz').read_bytes()
    write_curves(path, dict(reversed(curves.items())))
    assert (tmp_path / 'curves.xz').read_bytes() == first


def test_every_float_of_five_decimals_survives(tmp_path):
    values = [round(i * 0.00001 + 0.3, 5) for i in range(20000)]
    path = str(tmp_path / 'c.xz')
    write_curves(path, {'run': {'loss': values}})
    assert read_curves(path)['run']['loss'] == values


@pytest.mark.parametrize('value', [0.123456, math.inf, 1e300])
def test_a_value_it_could_not_keep_exactly_is_refused(tmp_path, value):
    with pytest.raises(ValueError, match='at most five decimals'):
        write_curves(str(tmp_path / 'c.xz'), {'run': {'loss': [value]}})
    assert not (tmp_path / 'c.xz').exists()


def test_another_file_is_not_read_as_curves(tmp_path):
    import lzma

    path = tmp_path / 'other.xz'
    path.write_bytes(lzma.compress(b'{"format": "x"}\n'))
    with pytest.raises(ValueError, match='not a file of curves'):
        read_curves(str(path))

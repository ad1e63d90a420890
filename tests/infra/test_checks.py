import pytest


def test_numpy_scalars_are_numbers_and_come_back_as_python_ones():
    import numpy as np

    from pyg_bemap.infra.checks import (
        check_integer,
        check_memory_budget,
        check_positive,
        check_share,
    )

    assert type(check_integer('n', np.int64(2))) is int
    assert check_share('beta', np.float32(0.5)) == 0.5
    assert type(check_share('beta', np.float32(0.5))) is float
    assert type(check_positive('delta', np.float64(2.0))) is float
    assert check_memory_budget(np.int32(1024)) == 1024
    for bad in (np.bool_(True), True, 1.5, '2'):
        with pytest.raises(ValueError, match="'n' must be an integer"):
            check_integer('n', bad)
    with pytest.raises(ValueError, match=r"'beta' must be a number in \[0"):
        check_share('beta', np.float32(1.5))


def test_require_and_check_choice_name_the_argument_and_the_value():
    from pyg_bemap.infra.checks import check_choice, require

    require(True, 'n', 'anything', 0)
    with pytest.raises(ValueError, match=r"'n' must be odd \(got 2\)"):
        require(False, 'n', 'odd', 2)
    assert check_choice('mode', 'a', ('a', 'b')) == 'a'
    with pytest.raises(
        ValueError, match=r"'mode' must be one of \('a', 'b'\) \(got 'c'\)"
    ):
        check_choice('mode', 'c', ('a', 'b'))

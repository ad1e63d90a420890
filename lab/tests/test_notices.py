import warnings

from pyg_bemap_lab.notices import pyg_loading_quietly

NOTICE = '`torch.jit.script` is deprecated. Please switch to `torch.compile`'


def test_only_the_jit_notice_is_hidden_and_only_inside():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with pyg_loading_quietly():
            warnings.warn(NOTICE, FutureWarning, stacklevel=1)
            warnings.warn('another notice', FutureWarning, stacklevel=1)
            warnings.warn(NOTICE, UserWarning, stacklevel=1)
        warnings.warn(NOTICE, FutureWarning, stacklevel=1)
    assert [(str(w.message), w.category) for w in caught] == [
        ('another notice', FutureWarning),
        (NOTICE, UserWarning),
        (NOTICE, FutureWarning),
    ]

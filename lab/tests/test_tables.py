from pyg_bemap_lab.tables import relevant_settings


def test_only_the_settings_a_method_uses_are_shown():
    config = dict(lr=0.01, beta=0.25, min_keep=4, fairdrop_delta=0.16)
    assert relevant_settings('GCN', config) == dict(lr=0.01)
    assert relevant_settings('BeMap(sym)-degree', config) == dict(
        lr=0.01, beta=0.25, min_keep=4
    )
    assert relevant_settings('FairDrop', config) == dict(
        lr=0.01, fairdrop_delta=0.16
    )

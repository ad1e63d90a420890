from pyg_bemap_lab.reporting.tables import relevant_settings
from pyg_bemap_lab.run_config import SAMPLER_NAMES, RunConfig


def test_only_the_settings_a_method_uses_are_shown():
    config = RunConfig(lr=0.01)
    backbone = {
        k: v
        for k, v in config.as_dict().items()
        if k not in {*SAMPLER_NAMES, 'fairdrop_delta'}
    }
    assert relevant_settings('GCN', config) == backbone
    assert backbone['lr'] == 0.01 and backbone['input_dropout'] == 0.0
    assert relevant_settings('BeMap(sym)-degree', config) == {
        **backbone,
        **{k: config.as_dict()[k] for k in SAMPLER_NAMES},
    }
    assert relevant_settings('FairDrop', config) == {
        **backbone,
        'fairdrop_delta': 0.16,
    }

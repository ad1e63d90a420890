import os.path as osp

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.protocol_report import ProtocolReport
from pyg_bemap_lab.reporting.robustness import (
    RobustnessReport,
    robustness_protocol,
)
from pyg_bemap_lab.running.planning import chosen_configs
from pyg_bemap_lab.running.protocols import PROTOCOLS

RESULTS = osp.join(osp.dirname(__file__), '..', '..', 'results')


def test_the_files_of_the_default_protocols_report():
    store = RunStore(osp.join(RESULTS, 'evaluation', 'runs.jsonl'))
    default = PROTOCOLS['default']
    report = ProtocolReport(default, store, chosen_configs(default, store))
    assert set(report.files()) == {
        'default.md',
        *(
            f'tradeoff_default_{d}.png'
            for d in ('nba', 'german', 'recidivism', 'credit')
        ),
        'paired_default.png',
        'paired_default_sym.png',
        'tuning_default.md',
        'curves_default.png',
        'paper_comparison.md',
    }
    study = robustness_protocol()
    assert set(RobustnessReport(study, store, {}).files()) == {
        'robustness.md',
        'robustness.png',
    }

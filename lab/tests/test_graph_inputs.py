import argparse

import pytest
import torch

from pyg_bemap.datasets import biased_sbm
from pyg_bemap_lab.graph_inputs import add_graph_source, read_graph_source


def parse(*argv):
    parser = argparse.ArgumentParser()
    add_graph_source(parser)
    return parser.parse_args(argv)


def test_the_graph_source(tmp_path):
    assert read_graph_source(parse()) == 'nba'
    assert read_graph_source(parse('--dataset', 'bail')) == 'recidivism'
    torch.save(biased_sbm(50, seed=0), tmp_path / 'g.pt')
    graph = read_graph_source(parse('--graph', str(tmp_path / 'g.pt')))
    assert graph.num_nodes == 50 and graph.s.max() == 1


def test_one_graph_only_and_whole_tables():
    with pytest.raises(ValueError, match='--dataset or --graph, not sev'):
        read_graph_source(parse('--dataset', 'nba', '--graph', 'g.pt'))
    with pytest.raises(ValueError, match='--nodes also needs --edges, --id'):
        read_graph_source(parse('--nodes', 'n.csv', '--sens-col', 's'))

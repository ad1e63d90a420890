import argparse

import pytest
import torch

from pyg_bemap.datasets import biased_sbm
from pyg_bemap_lab.graph_inputs import (
    add_graph_source,
    check_graph_options,
    read_graph_source,
)


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


def test_one_graph_only_and_whole_tables(capsys):
    parser = argparse.ArgumentParser()
    add_graph_source(parser)
    for argv, message in (
        (['--dataset', 'nba', '--graph', 'g.pt'], '--dataset or --graph, not'),
        (
            ['--nodes', 'n.csv', '--sens-col', 's'],
            '--nodes also needs --edges',
        ),
    ):
        with pytest.raises(SystemExit) as exit_:  # as argparse exits: 2
            check_graph_options(parser, parser.parse_args(argv))
        assert exit_.value.code == 2 and message in capsys.readouterr().err

r"""The :obj:`pyg-bemap` command."""
import argparse
import sys
import time
from typing import List, Optional

import torch

from pyg_bemap.datasets import biased_sbm
from pyg_bemap.train import TwoLayerGCN, train_node_classifier
from pyg_bemap.transforms import BalanceAwareSampling
from pyg_bemap.utils.sampling import STRATEGIES


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f'must be a positive integer '
                                         f'(got {text})')
    return value


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f'must be in [0, 1] (got {text})')
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='pyg-bemap',
        description='BeMap (balanced message passing) for fair GNNs.')
    commands = parser.add_subparsers(dest='command', required=True)
    train = commands.add_parser(
        'train', help='train a vanilla GCN and a BeMap GCN and compare them',
        description='Trains a vanilla 2-layer GCN and BeMap(sym) on the '
        'built-in graph, selects each model on the validation split and '
        'prints test accuracy and fairness gaps side by side.')
    train.add_argument('--epochs', type=_positive_int, default=100)
    train.add_argument('--seed', type=int, default=0)
    train.add_argument('--hidden', type=_positive_int, default=128)
    train.add_argument('--lr', type=float, default=1e-2)
    train.add_argument('--strategy', choices=STRATEGIES, default='balance')
    train.add_argument('--beta', type=_share, default=0.25)
    train.add_argument('--min-keep', type=int, default=4)
    train.add_argument('--nodes', type=_positive_int, default=2000,
                       help='size of the built-in synthetic graph')
    return parser


def run_train(args: argparse.Namespace) -> None:
    data = biased_sbm(args.nodes, seed=args.seed)
    data = BalanceAwareSampling(sens_attr='s')(data)
    print(f'built-in biased SBM: {data.num_nodes} nodes, '
          f'{data.num_edges // 2} undirected edges, groups '
          f'{torch.bincount(data.s).tolist()}')
    rows = []
    for name, bemap in (('GCN', False), ('BeMap(sym)', True)):
        torch.manual_seed(args.seed)
        model = TwoLayerGCN(data.num_features, args.hidden, 2, bemap=bemap,
                            **(dict(beta=args.beta, min_keep=args.min_keep,
                                    strategy=args.strategy) if bemap else {}))
        start = time.perf_counter()
        result = train_node_classifier(model, data, args.epochs, lr=args.lr,
                                       seed=args.seed)
        elapsed = time.perf_counter() - start
        rows.append((name, result, elapsed))
    print(f"\n{'model':<12}{'epoch':>7}{'val acc':>9}{'test acc':>10}"
          f"{'dSP':>8}{'dEO':>8}{'time':>8}")
    for name, result, elapsed in rows:
        test = result['test']
        print(f"{name:<12}{result['epoch']:>7}{result['val'].accuracy:>9.3f}"
              f"{test.accuracy:>10.3f}{test.delta_sp:>8.3f}"
              f"{test.delta_eo:>8.3f}{elapsed:>7.1f}s")
    print('\nModels selected by validation accuracy; test-split figures.')


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == 'train':
        run_train(args)
    return 0


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())

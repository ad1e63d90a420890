r"""The splits of the reference loaders (BeMap's, after FairGNN's and
NIFTY's), replayed exactly: they shuffle with Python's ``random``
module, seeded with 20, so the same seed gives the same nodes here."""

import random

import torch
from torch import Tensor

from pyg_bemap.datasets.splits import check_label_budget

#: The seed of the reference loaders.
REFERENCE_SEED = 20

#: How each reference loader splits (see :func:`reference_split`).
SPLIT_KINDS = ('per_class', 'labelled', 'labelled_val_is_test')


def per_class_split(
    y: Tensor, label_budget: int, seed: int = REFERENCE_SEED
) -> tuple[Tensor, Tensor, Tensor]:
    r"""The split of the Recidivism, Credit and German loaders.

    With one ``random.Random`` seeded with :obj:`seed`, the nodes of
    label 0, then those of label 1 (each in node order), are shuffled. Of
    each class, with :math:`n_c` nodes, the first
    :math:`\min(\lfloor n_c / 2 \rfloor, \lfloor b / 2 \rfloor)` train
    (:math:`b` the :obj:`label_budget`), the slice from
    :math:`\lfloor 0.5 n_c \rfloor` to :math:`\lfloor 0.75 n_c \rfloor`
    validates and the rest tests. Unlabelled nodes (:obj:`y < 0`) are in
    no split.

    Args:
        y (torch.Tensor): The labels, :obj:`-1` for unlabelled nodes.
        label_budget (int): The most training nodes (half per class).
        seed (int, optional): The seed of Python's shuffle.
            (default: :obj:`20`)

    Returns:
        The boolean masks :obj:`(train, val, test)`.
    """
    _check(y, label_budget)
    check_per_class_budget(label_budget)
    rng = random.Random(seed)
    parts: tuple[list[int], list[int], list[int]] = ([], [], [])
    for label in (0, 1):
        nodes = (y == label).nonzero().view(-1).tolist()
        rng.shuffle(nodes)
        half, three_quarters = len(nodes) // 2, (3 * len(nodes)) // 4
        parts[0].extend(nodes[: min(half, label_budget // 2)])
        parts[1].extend(nodes[half:three_quarters])
        parts[2].extend(nodes[three_quarters:])
    return _masks(y, parts)


def check_per_class_budget(label_budget: int) -> None:
    r"""Raises unless :obj:`label_budget` leaves each class a training
    node in :func:`per_class_split` (which trains
    :math:`\lfloor b / 2 \rfloor` of each)."""
    if label_budget < 2:
        raise ValueError(
            f'The per-class split trains label_budget // 2 nodes of each '
            f"class, none with 'label_budget={label_budget}': pass at "
            f'least 2'
        )


def labelled_split(
    y: Tensor,
    label_budget: int,
    seed: int = REFERENCE_SEED,
    validation_is_test: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    r"""The split of the NBA and Pokec loaders.

    The labelled nodes (:obj:`y >= 0`, in node order) are shuffled with a
    ``random.Random`` seeded with :obj:`seed`; of their :math:`n`, the
    first :math:`\min(\lfloor n / 2 \rfloor, b)` train. Then either the
    slice from :math:`\lfloor 0.5 n \rfloor` to :math:`\lfloor 0.75 n
    \rfloor` validates and the rest tests (Pokec), or, with
    :obj:`validation_is_test=True` (NBA), every node after the first
    :math:`b` tests and the validation split *is* the test split.

    Args:
        y (torch.Tensor): The labels, :obj:`-1` for unlabelled nodes.
        label_budget (int): The most training nodes (:math:`b`).
        seed (int, optional): The seed of Python's shuffle.
            (default: :obj:`20`)
        validation_is_test (bool, optional): Test on every node after the
            first :math:`b` and validate on the same nodes.
            (default: :obj:`False`)

    Returns:
        The boolean masks :obj:`(train, val, test)`.
    """
    _check(y, label_budget)
    nodes = (y >= 0).nonzero().view(-1).tolist()
    random.Random(seed).shuffle(nodes)
    half, three_quarters = len(nodes) // 2, (3 * len(nodes)) // 4
    train = nodes[: min(half, label_budget)]
    if validation_is_test:
        rest = nodes[label_budget:]
        return _masks(y, (train, rest, rest))
    return _masks(
        y, (train, nodes[half:three_quarters], nodes[three_quarters:])
    )


def reference_split(
    y: Tensor, kind: str, label_budget: int, seed: int = REFERENCE_SEED
) -> tuple[Tensor, Tensor, Tensor]:
    r"""The split of a reference loader: :obj:`kind` is
    :obj:`'per_class'` (:func:`per_class_split`), :obj:`'labelled'` or
    :obj:`'labelled_val_is_test'` (:func:`labelled_split`)."""
    if kind == 'per_class':
        return per_class_split(y, label_budget, seed)
    if kind in ('labelled', 'labelled_val_is_test'):
        return labelled_split(
            y, label_budget, seed, kind == 'labelled_val_is_test'
        )
    raise ValueError(
        f'Unknown split kind {kind!r}; choose one of {SPLIT_KINDS}'
    )


def _check(y: Tensor, label_budget: int) -> None:
    if y.dim() != 1 or y.is_floating_point():
        raise ValueError(
            f"'y' must be a 1-dimensional integer tensor (got shape "
            f'{list(y.shape)}, dtype {y.dtype})'
        )
    check_label_budget(label_budget)


def _masks(
    y: Tensor, parts: tuple[list[int], list[int], list[int]]
) -> tuple[Tensor, Tensor, Tensor]:
    masks = []
    for nodes in parts:
        mask = torch.zeros(y.numel(), dtype=torch.bool, device=y.device)
        mask[torch.tensor(nodes, dtype=torch.long, device=y.device)] = True
        masks.append(mask)
    return masks[0], masks[1], masks[2]

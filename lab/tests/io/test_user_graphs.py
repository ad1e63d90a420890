import pytest
import torch
from torch_geometric.data import Data

from pyg_bemap.datasets import biased_sbm
from pyg_bemap_lab.io.user_graphs import (
    graph_for_runs,
    graph_key,
    read_graph_file,
    read_tables,
    stratified_masks,
    user_graph,
)

NODES = """ID,gender,score,age,income
a,F,1,30,2.5
b,M,0,41,3.0
c,F,,25,1.0
d,M,1,38,4.5
"""
EDGES = """source,target
a,b
b,a
c,d
d,d
"""


def write(tmp_path, nodes=NODES, edges=EDGES):
    (tmp_path / 'nodes.csv').write_text(nodes)
    (tmp_path / 'edges.csv').write_text(edges)
    return str(tmp_path / 'nodes.csv'), str(tmp_path / 'edges.csv')


def test_a_node_table_and_an_edge_list(tmp_path):
    nodes, edges = write(tmp_path)
    data = read_tables(nodes, edges, 'ID', 'gender', 'score')
    assert data.x.tolist() == [[30, 2.5], [41, 3.0], [25, 1.0], [38, 4.5]]
    assert data.s.tolist() == [0, 1, 0, 1]  # F, M: sorted group ids
    assert data.y.tolist() == [1, 0, -1, 1]  # an empty label: unlabelled
    # undirected, each pair once per direction, the self-loop dropped
    assert data.edge_index.tolist() == [[0, 1, 2, 3], [1, 0, 3, 2]]
    assert 'train_mask' not in data


@pytest.mark.parametrize(
    'nodes, edges, message',
    [
        (NODES.replace('score', 'label'), EDGES, "no column 'score'"),
        (
            NODES.replace('age', 'city').replace('30', 'Oslo'),
            EDGES,
            "column\\(s\\) 'city' are not numeric",
        ),
        (
            NODES,
            EDGES.replace('c,d', 'c,x'),
            "edges.csv: line 4: the target id 'x' is not in the node table",
        ),
        (
            NODES,
            EDGES.replace('source,target', 'from,to'),
            "needs the header 'source,target'",
        ),
        (NODES.replace('1,30', '2,30'), EDGES, 'must be binary'),
        (NODES.replace('M', 'F'), EDGES, "'gender' holds one group only"),
        (
            NODES.replace(',F,', ',0.5,').replace(',M,', ',1,'),
            EDGES,
            "'gender' holds non-integral values",
        ),
        (
            NODES.replace(',F,1', ',A,1').replace('d,M', 'd,B'),
            EDGES,
            "'gender' holds a different value on every row",
        ),
        (NODES.split('a,F')[0], EDGES, 'a header but no rows'),
        (
            NODES.replace(',F,', ',inf,').replace(',M,', ',1,'),
            EDGES,
            "'gender' holds infinite values",
        ),
        (NODES.replace('b,M', 'a,M'), EDGES, "the id 'a' is on two rows"),
        (NODES.replace(',0,', ',1,'), EDGES, "'score' hold one class only"),
        (NODES.replace('1,30', 'yes,30'), EDGES, "'score' must be binary"),
        (NODES.replace('2.5', ''), EDGES, "'income' have empty cells"),
        (
            NODES.replace('2.5', 'inf'),
            EDGES,
            "nodes.csv: the feature column\\(s\\) 'income' hold infinite",
        ),
    ],
)
def test_bad_tables_say_what_is_wrong_and_where(
    tmp_path, nodes, edges, message
):
    paths = write(tmp_path, nodes, edges)
    with pytest.raises(ValueError, match=message):
        read_tables(*paths, 'ID', 'gender', 'score')


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match='nodes.csv: no such file'):
        read_tables(str(tmp_path / 'nodes.csv'), 'e.csv', 'i', 's', 'y')


def test_a_graph_keeps_its_masks_and_the_callers_graph(tmp_path):
    data = biased_sbm(100, seed=1)
    x = data.x.clone()
    graph = user_graph(data)
    assert torch.equal(graph.train_mask, data.train_mask)
    assert graph.x.dtype == torch.float and torch.equal(data.x, x)
    del data.test_mask
    with pytest.raises(ValueError, match='but not test_mask'):
        user_graph(data)
    data = biased_sbm(100, seed=1)
    data.x[0, 0] = float('nan')
    with pytest.raises(ValueError, match='NaN or infinite'):
        user_graph(data)
    del data.x
    with pytest.raises(ValueError, match="node features 'data.x'"):
        user_graph(data)


def test_a_saved_graph(tmp_path):
    data = biased_sbm(80, seed=2)
    data.group = data.s
    del data.s
    torch.save(data, tmp_path / 'g.pt')
    graph = read_graph_file(str(tmp_path / 'g.pt'), sens_attr='group')
    assert torch.equal(graph.s, data.group)
    (tmp_path / 'bad.pt').write_bytes(b'not a graph')
    with pytest.raises(ValueError, match='not a graph saved with torch.save'):
        read_graph_file(str(tmp_path / 'bad.pt'))
    torch.save({'x': 1}, tmp_path / 'dict.pt')
    with pytest.raises(ValueError, match='holds a dict'):
        read_graph_file(str(tmp_path / 'dict.pt'))


def test_the_key_follows_the_content():
    data = user_graph(biased_sbm(60, seed=3))
    assert graph_key(data) == graph_key(data.clone())
    assert graph_key(data).startswith('graph-') and len(graph_key(data)) == 18
    other = data.clone()
    other.y = 1 - other.y.clamp(min=0)
    assert graph_key(other) != graph_key(data)


def test_a_stratified_split_keeps_every_strata_share():
    gen = torch.Generator().manual_seed(0)
    y = torch.randint(-1, 2, (1000,), generator=gen)
    s = torch.randint(0, 3, (1000,), generator=gen)
    train, val, test = stratified_masks(y, s, seed=5, fractions=(0.6, 0.2))
    assert not (train & val).any() and not (val & test).any()
    assert torch.equal(train | val | test, y >= 0)
    for label in (0, 1):
        for group in range(3):
            stratum = (y == label) & (s == group)
            n = int(stratum.sum())
            assert int((train & stratum).sum()) == round(0.6 * n)
            assert int((train | val)[stratum].sum()) == round(0.8 * n)
    again = stratified_masks(y, s, seed=5, fractions=(0.6, 0.2))
    assert torch.equal(again[0], train)
    assert not torch.equal(stratified_masks(y, s, seed=6)[0], train)
    with pytest.raises(ValueError, match='leaving a test split'):
        stratified_masks(y, s, seed=0, fractions=(0.8, 0.2))


def test_a_graph_without_labels_as_pyg_gives_them():
    data = Data(x=torch.ones(3, 1), edge_index=torch.tensor([[0], [1]]))
    data.s = torch.tensor([0, 1, 0])
    with pytest.raises(ValueError, match="one label per node in 'data.y'"):
        user_graph(data)


def sbm_with_masks():
    data = biased_sbm(60, seed=1)
    order = torch.randperm(60, generator=torch.Generator().manual_seed(0))
    for name, part in zip(
        ('train_mask', 'val_mask', 'test_mask'), order.chunk(3)
    ):
        data[name] = torch.zeros(60, dtype=torch.bool).index_fill_(0, part, 1)
    return data


@pytest.mark.parametrize(
    'overlap', [('train_mask', 'test_mask'), ('val_mask', 'test_mask')]
)
def test_overlapping_masks_are_refused(overlap):
    data = sbm_with_masks()
    user_graph(data)  # disjoint: accepted
    first, second = overlap
    data[second] = data[second] | data[first]
    with pytest.raises(ValueError, match=f"'data.{first}' and 'data.{second}"):
        user_graph(data)


@pytest.mark.parametrize(
    'change, match',
    [
        (lambda d: setattr(d, 'edge_index', d.edge_index[:, :0]), 'no edges'),
        (lambda d: setattr(d, 'y', torch.ones_like(d.y)), 'one class'),
        (lambda d: setattr(d, 'x', d.x[:, :0]), 'no columns'),
    ],
    ids=['no edges', 'one label class', 'no feature columns'],
)
def test_graphs_that_cannot_pose_the_question_are_refused(change, match):
    data = biased_sbm(60, seed=1)
    change(data)
    with pytest.raises(ValueError, match=match):
        user_graph(data)


def test_masks_of_one_column_are_taken_and_other_shapes_refused():
    data = sbm_with_masks()
    expected = user_graph(data)
    for name in ('train_mask', 'val_mask', 'test_mask'):
        data[name] = data[name].view(-1, 1)
    graph = user_graph(data)
    for name in ('train_mask', 'val_mask', 'test_mask'):
        assert torch.equal(graph[name], expected[name])
    data.val_mask = data.val_mask.repeat(1, 2)
    with pytest.raises(
        ValueError,
        match=r"'data.val_mask' must be a boolean"
        r' mask of shape \[60\] or \[60, 1\].*\[60, 2\]',
    ):
        user_graph(data)


def _only(data, name, keep):
    data[name] = data[name] & keep
    return data


@pytest.mark.parametrize(
    'change, match',
    [
        (
            lambda d: _only(d, 'test_mask', d.s == 0),
            "'data.test_mask' selects nodes of one sensitive group only",
        ),
        (
            lambda d: _only(d, 'val_mask', d.y == 1),
            "'data.val_mask' selects nodes of one class only",
        ),
        (
            lambda d: _only(d, 'train_mask', d.y == 0),
            "'data.train_mask' selects nodes of one class only",
        ),
    ],
    ids=['one group tested', 'one class validated', 'one class trained'],
)
def test_splits_that_cannot_pose_the_question_are_refused(
    tmp_path, change, match
):
    data = sbm_with_masks()
    change(data)
    user_graph(data)  # described, e.g. by diagnose
    with pytest.raises(ValueError, match=match):
        graph_for_runs(data, str(tmp_path))


def test_runs_need_labelled_nodes_in_every_group(tmp_path):
    data = biased_sbm(60, seed=1)
    del data.train_mask, data.val_mask, data.test_mask  # a split per seed
    data.y = torch.where(data.s == 1, -1, data.y)
    user_graph(data)  # described, e.g. by diagnose
    with pytest.raises(ValueError, match=r'\[1\] have no labelled node'):
        graph_for_runs(data, str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_a_repeated_numeric_id_is_shown_as_the_table_has_it(tmp_path):
    nodes = NODES.replace('a,', '1,').replace('b,', '3,')
    nodes = nodes.replace('c,', '3,').replace('d,', '4,')
    paths = write(tmp_path, nodes, 'source,target\n1,4\n')
    with pytest.raises(ValueError, match=r': the id 3 is on two rows$'):
        read_tables(*paths, 'ID', 'gender', 'score')

"""minigrad.data against torch.utils.data: the same programs give the same batches, the
same types and dtypes, or a clear error (a differential review of the data utilities)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
from minigrad.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader,
                           IterableDataset, RandomSampler, Sampler, SequentialSampler,
                           StackDataset, Subset, SubsetRandomSampler, TensorDataset,
                           WeightedRandomSampler, default_collate, default_convert)


def described(batch):
    """A batch as plain Python (containers, dtypes and values), for comparing a minigrad
    batch with a PyTorch one."""
    if hasattr(batch, "tolist") and hasattr(batch, "dtype"):
        return ("tensor", str(batch.dtype).replace("torch.", ""), batch.tolist())
    if isinstance(batch, dict):
        return (type(batch).__name__, {k: described(v) for k, v in batch.items()})
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [described(b) for b in batch])
    return batch


class Listed:
    """A map-style dataset over a list (no minigrad or torch base class)."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]


# --- default_collate: PyTorch's output types ---------------------------------------------------


@pytest.mark.parametrize("batch", [
    [1.5, 2.5],                                  # Python floats: float64
    [1, 2.5],                                    # an int first, a float after: float32
    [1.5, 2],
    [(1, 2.0), (3, 4.0)],                        # tuples: a list of fields
    [[1, 2.0], [3, 4.0]],
    [{"x": 1, "y": 2.0}, {"x": 3, "y": 4.0}],
    [{"a": {"b": (1, 2)}}, {"a": {"b": (3, 4)}}],
    [b"a", b"b"],                                # bytes stay as they are
    [range(2), range(2)],                        # any Sequence, field by field
])
def test_default_collate_gives_pytorchs_types_and_dtypes(batch):
    torch = pytest.importorskip("torch")
    assert described(default_collate(batch)) == described(
        torch.utils.data.default_collate(batch))


def test_default_collate_of_python_floats_is_float64():
    assert default_collate([0.1, 0.2]).dtype == np.float64


def test_default_collate_keeps_the_fraction_of_a_float_after_an_int():
    np.testing.assert_array_equal(default_collate([1, 2.5]).numpy(), [1.0, 2.5])


def test_default_collate_keeps_the_mapping_type():
    batch = default_collate([OrderedDict(a=1), OrderedDict(a=2)])
    assert type(batch) is OrderedDict and batch["a"].tolist() == [1, 2]


def test_default_collate_of_numpy_strings_is_the_list():
    assert default_collate([np.str_("a"), np.str_("b")]) == ["a", "b"]


def test_default_collate_of_string_arrays_names_the_dtype():
    with pytest.raises(TypeError, match=r"default_collate: .*dtype <U1.*collate_fn"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_collate_of_ints_beyond_int64_is_an_error():
    with pytest.raises(TypeError, match=r"default_collate: cannot make a tensor of the "
                                        r"samples \[9223372036854775808, 1\]"):
        default_collate([2 ** 63, 1])


def test_a_loader_over_a_tensor_dataset_yields_lists_as_pytorchs():
    torch = pytest.importorskip("torch")
    x, y = np.arange(10.0, dtype=np.float32).reshape(5, 2), np.arange(5)
    ours = DataLoader(TensorDataset(mg.tensor(x), mg.tensor(y)), batch_size=2)
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=2)
    assert [described(b) for b in ours] == [described(b) for b in theirs]


# --- default_convert and batch_size=None -------------------------------------------------------


@pytest.mark.parametrize("sample", [
    np.zeros(2), (np.ones(2, np.float32), 1), np.float32(2), np.int64(3), 3, "s",
    np.array(["a"]), {"a": np.zeros(1)}, [np.zeros(1), 2.5],
])
def test_default_convert_is_pytorchs(sample):
    torch = pytest.importorskip("torch")
    ours, theirs = default_convert(sample), torch.utils.data.default_convert(sample)
    if isinstance(theirs, np.ndarray):
        assert ours is sample
    else:
        assert described(ours) == described(theirs)


def test_unbatched_loader_turns_numpy_samples_into_tensors():
    torch = pytest.importorskip("torch")
    samples = [(np.zeros(2), 1), (np.ones(2), 2)]
    assert [described(s) for s in DataLoader(Listed(samples), batch_size=None)] == \
        [described(s) for s in torch.utils.data.DataLoader(Listed(samples), batch_size=None)]


def test_unbatched_stream_turns_numpy_samples_into_tensors():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter([np.zeros(2), np.float32(1)])

    first, second = DataLoader(Stream(), batch_size=None)
    assert isinstance(first, mg.Tensor) and first.dtype == np.float64
    assert isinstance(second, mg.Tensor) and second.dtype == np.float32


# --- DataLoader attributes ---------------------------------------------------------------------


def test_loader_batch_size_is_none_with_a_batch_sampler():
    loader = DataLoader(Listed([1, 2, 3]), batch_sampler=[[0, 1], [2]])
    assert loader.batch_size is None and not loader.drop_last and len(loader) == 2


@pytest.mark.parametrize("name, value", [("batch_size", 5), ("drop_last", True),
                                         ("sampler", [1]), ("batch_sampler", [[1]]),
                                         ("dataset", [1])])
def test_setting_what_plans_the_batches_after_init_is_an_error(name, value):
    loader = DataLoader(Listed(list(range(10))), batch_size=3)
    with pytest.raises(ValueError, match=f"DataLoader: {name} attribute should not be set"):
        setattr(loader, name, value)
    assert [b.tolist() for b in loader][0] == [0, 1, 2]


def test_loader_takes_pytorchs_other_keywords():
    loader = DataLoader(Listed([1, 2]), batch_size=2, in_order=False, pin_memory_device="")
    assert loader.in_order is False and loader.prefetch_factor is None
    assert loader.persistent_workers is False and [b.tolist() for b in loader] == [[1, 2]]


# --- what the loader asks the dataset for ------------------------------------------------------


def test_loader_fetches_a_batch_through_getitems():
    class Batched(Listed):
        def __getitems__(self, indices):
            return [10 * i for i in indices]

    assert [b.tolist() for b in DataLoader(Batched([0] * 5), batch_size=3)] == [[0, 10, 20],
                                                                                [30, 40]]


def test_a_tensor_dataset_subclass_gets_its_own_samples_batched():
    class Flipped(TensorDataset):
        def __getitem__(self, index):
            x, y = super().__getitem__(index)
            return x.flip(0), y

    dataset = Flipped(mg.arange(12.0).reshape(4, 3), mg.arange(4))
    xb, _ = next(iter(DataLoader(dataset, batch_size=2)))
    assert xb.tolist() == [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]]


def test_a_subset_subclass_gets_its_own_samples_batched():
    class Zeroed(Subset):
        def __getitem__(self, index):
            x, y = super().__getitem__(index)
            return x * 0, y

    subset = Zeroed(TensorDataset(mg.arange(4.0), mg.arange(4)), [3, 1])
    xb, yb = next(iter(DataLoader(subset, batch_size=2)))
    assert xb.tolist() == [0.0, 0.0] and yb.tolist() == [3, 1]


def test_subset_takes_a_list_of_positions_and_getitems():
    torch = pytest.importorskip("torch")
    x = np.arange(6)
    ours = Subset(TensorDataset(mg.tensor(x)), [5, 4, 3])
    theirs = torch.utils.data.Subset(torch.utils.data.TensorDataset(torch.tensor(x)), [5, 4, 3])
    assert described(ours[[0, 2]]) == described(theirs[[0, 2]])
    assert described(ours.__getitems__([2, 0])) == described(theirs.__getitems__([2, 0]))


def test_a_sampler_of_keys_hands_them_to_the_dataset_unchanged():
    dataset = {"a": 1, "b": 2, "c": 3}
    loader = DataLoader(dataset, sampler=["c", "a", "b"], batch_size=2)
    assert [b.tolist() for b in loader] == [[3, 1], [2]]
    assert list(DataLoader(dataset, sampler=["b"], batch_size=None)) == [2]


def test_batch_sampler_keeps_the_indices_a_sampler_yields():
    class Pairs(Sampler):
        def __iter__(self):
            return iter([(0, "a"), (1, "b"), (2, "c")])

        def __len__(self):
            return 3

    assert list(BatchSampler(Pairs(), 2, False)) == [[(0, "a"), (1, "b")], [(2, "c")]]
    assert list(BatchSampler([(1, 2), (3, 4)], 2, False)) == [[(1, 2), (3, 4)]]


@pytest.mark.parametrize("base", [RandomSampler, SequentialSampler])
def test_a_sampler_subclass_with_its_own_iter_decides_the_order(base):
    class Backwards(base):
        def __iter__(self):
            return iter(range(len(self.data_source) - 1, -1, -1))

    loader = DataLoader(TensorDataset(mg.arange(5)), sampler=Backwards(range(5)), batch_size=2)
    assert [b.tolist() for b, in loader] == [[4, 3], [2, 1], [0]]


def test_subset_random_sampler_yields_the_indices_as_given():
    assert sorted(SubsetRandomSampler(["a", "b", "c"])) == ["a", "b", "c"]


def test_weighted_sampler_weights_are_a_float64_tensor():
    weights = WeightedRandomSampler([1, 2], 3).weights
    assert isinstance(weights, mg.Tensor) and weights.dtype == np.float64


# --- ChainDataset, StackDataset, ConcatDataset ---------------------------------------------------


class Stream(IterableDataset):
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)


def test_adding_streams_chains_them():
    chained = Stream([1, 2]) + Stream([3])
    assert isinstance(chained, ChainDataset) and list(chained) == [1, 2, 3]
    assert len(chained) == 3
    assert [b.tolist() for b in DataLoader(chained, batch_size=2)] == [[1, 2], [3]]


def test_chain_dataset_of_a_map_style_dataset_says_so():
    with pytest.raises(TypeError, match="ChainDataset: .*got a list.*ConcatDataset"):
        list(ChainDataset([Stream([1]), [2]]))


def test_concat_dataset_of_a_stream_points_at_chain_dataset():
    with pytest.raises(TypeError, match="ConcatDataset: Stream is an IterableDataset.*Chain"):
        ConcatDataset([Listed([1]), Stream([2])])


def test_stack_dataset_is_pytorchs():
    torch = pytest.importorskip("torch")
    for args, kwargs in [(([1, 2, 3], [4.0, 5.0, 6.0]), {}), ((), {"a": [1, 2, 3],
                                                                     "b": [4.0, 5.0, 6.0]})]:
        ours = DataLoader(StackDataset(*args, **kwargs), batch_size=2)
        theirs = torch.utils.data.DataLoader(torch.utils.data.StackDataset(*args, **kwargs),
                                             batch_size=2)
        assert [described(b) for b in ours] == [described(b) for b in theirs]


def test_stack_dataset_of_different_lengths_names_them():
    with pytest.raises(ValueError, match=r"StackDataset: .*one length, got a: 2, b: 1"):
        StackDataset(a=[1, 2], b=[3])


def test_a_stream_split_across_workers_reads_all_of_it_in_the_main_process():
    """PyTorch's IterableDataset example: each worker reads its share, found through
    get_worker_info(); minigrad has no workers, so it is None and the stream is read once,
    whole, as with PyTorch's num_workers=0."""
    import warnings

    from minigrad.utils.data import get_worker_info

    class Range(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            if info is None:
                return iter(range(3, 7))
            share = -(-4 // info.num_workers)
            start = 3 + info.id * share
            return iter(range(start, min(start + share, 7)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loader = DataLoader(Range(), batch_size=2, num_workers=2)
    assert [b.tolist() for b in loader] == [[3, 4], [5, 6]]

"""minigrad.data: datasets, the DataLoader, and the built-in data sets."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import minigrad as mg
from minigrad.data import (CharTokenizer, ConcatDataset, DataLoader, Dataset, Subset,
                           TensorDataset, default_collate, load_digits, make_char_corpus,
                           make_char_lm_dataset, make_moons, make_sequence_task, make_spirals,
                           random_split, train_test_split)


def numbered(n: int = 10) -> TensorDataset:
    """Sample i is (features [i, 10 i] float32, label i int64): easy to trace through."""
    X = np.stack([np.arange(n), 10 * np.arange(n)], axis=1).astype(np.float32)
    return TensorDataset(X, np.arange(n, dtype=np.int64))


def labels_per_epoch(loader: DataLoader) -> np.ndarray:
    return np.concatenate([yb.numpy() for _, yb in loader])


class Pairs(Dataset):
    """A plain Dataset (no fast path): sample i is (a float64 array, a Python int)."""

    def __init__(self, n: int = 5) -> None:
        self.n = n

    def __getitem__(self, i):
        return np.array([i, -i], dtype=np.float64), i

    def __len__(self):
        return self.n


# --- Dataset, TensorDataset, Subset, ConcatDataset --------------------------------------


def test_dataset_base_class_asks_for_getitem_and_len():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
    with pytest.raises(NotImplementedError, match="__len__"):
        len(Dataset())


def test_tensor_dataset_item_is_a_tuple_of_per_tensor_items():
    x, y = numbered()[3]
    assert isinstance(x, mg.Tensor) and isinstance(y, mg.Tensor)
    np.testing.assert_array_equal(x.numpy(), [3, 30])
    assert y.item() == 3 and y.dtype == np.int64


def test_tensor_dataset_accepts_minigrad_tensors():
    dataset = TensorDataset(mg.randn(6, 3), mg.arange(6))
    assert len(dataset) == 6
    assert dataset[5][1].item() == 5


def test_tensor_dataset_keeps_float64():
    assert TensorDataset(np.zeros((4, 2)))[0][0].dtype == np.float64


def test_tensor_dataset_size_mismatch_names_each_size():
    with pytest.raises(ValueError, match=r"tensor 0: 100, tensor 1: 99"):
        TensorDataset(np.zeros((100, 2)), np.zeros(99))


def test_subset_takes_the_given_indices_in_order():
    subset = Subset(numbered(), [7, 2, 5])
    assert len(subset) == 3
    assert [subset[i][1].item() for i in range(3)] == [7, 2, 5]


def test_adding_datasets_concatenates_them():
    both = numbered(3) + numbered(4)
    assert isinstance(both, ConcatDataset) and len(both) == 7
    assert [both[i][1].item() for i in range(7)] == [0, 1, 2, 0, 1, 2, 3]
    assert both[-1][1].item() == 3


# --- random_split -----------------------------------------------------------------------


def test_random_split_with_counts_gives_those_sizes():
    assert [len(s) for s in random_split(numbered(10), [6, 3, 1])] == [6, 3, 1]


def test_random_split_with_fractions_hands_out_the_remainder_from_the_first():
    # floor(10 * 0.33) = 3 each, leaving 1 for the first subset, as in PyTorch
    assert [len(s) for s in random_split(numbered(10), [0.33, 0.33, 0.34])] == [4, 3, 3]
    assert [len(s) for s in random_split(numbered(10), [0.8, 0.2])] == [8, 2]


def test_random_split_subsets_are_disjoint_and_cover_the_dataset():
    parts = random_split(numbered(20), [0.5, 0.3, 0.2])
    indices = [i for part in parts for i in part.indices]
    assert sorted(indices) == list(range(20))


def test_random_split_is_random_and_reproducible_under_manual_seed():
    mg.manual_seed(1)
    first = random_split(numbered(20), [10, 10])[0].indices
    mg.manual_seed(1)
    again = random_split(numbered(20), [10, 10])[0].indices
    assert first == again
    assert first != list(range(10))


def test_random_split_lengths_that_do_not_add_up_are_an_error():
    with pytest.raises(ValueError, match=r"add up to 9.*has 10 samples"):
        random_split(numbered(10), [5, 4])


# --- DataLoader: batches ----------------------------------------------------------------


def test_len_is_the_number_of_batches():
    assert len(DataLoader(numbered(10), batch_size=4)) == 3
    assert len(DataLoader(numbered(10), batch_size=4, drop_last=True)) == 2
    assert len(DataLoader(numbered(8), batch_size=4, drop_last=True)) == 2


def test_last_batch_is_smaller_without_drop_last():
    sizes = [len(yb) for _, yb in DataLoader(numbered(10), batch_size=4)]
    assert sizes == [4, 4, 2]


def test_drop_last_leaves_out_the_short_batch():
    sizes = [len(yb) for _, yb in DataLoader(numbered(10), batch_size=4, drop_last=True)]
    assert sizes == [4, 4]


def test_without_shuffle_batches_come_in_dataset_order():
    np.testing.assert_array_equal(labels_per_epoch(DataLoader(numbered(10), batch_size=3)),
                                  np.arange(10))


def test_batches_are_tensors_with_batch_shape_and_dtype():
    xb, yb = next(iter(DataLoader(numbered(10), batch_size=4)))
    assert isinstance(xb, mg.Tensor) and isinstance(yb, mg.Tensor)
    assert xb.shape == (4, 2) and xb.dtype == np.float32
    assert yb.shape == (4,) and yb.dtype == np.int64


def test_float64_arrays_stay_float64_in_batches():
    xb, = next(iter(DataLoader(TensorDataset(np.zeros((5, 3))), batch_size=2)))
    assert xb.dtype == np.float64


def test_fast_tensor_dataset_batches_equal_stacked_samples():
    mg.manual_seed(3)
    fast = list(DataLoader(numbered(10), batch_size=4, shuffle=True))
    mg.manual_seed(3)  # an explicit collate_fn takes the sample-by-sample path
    slow = list(DataLoader(numbered(10), batch_size=4, shuffle=True,
                           collate_fn=default_collate))
    for (fx, fy), (sx, sy) in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(fx.numpy(), sx.numpy())
        np.testing.assert_array_equal(fy.numpy(), sy.numpy())
        assert fx.dtype == sx.dtype and fy.dtype == sy.dtype


def test_subset_of_a_tensor_dataset_batches_its_own_samples():
    subset = Subset(numbered(10), [9, 4, 6, 1, 0])
    np.testing.assert_array_equal(labels_per_epoch(DataLoader(subset, batch_size=2)),
                                  [9, 4, 6, 1, 0])


def test_a_list_of_samples_works_as_a_dataset():
    samples = [(np.float32(i), i) for i in range(5)]
    xb, yb = next(iter(DataLoader(samples, batch_size=5)))
    np.testing.assert_array_equal(yb.numpy(), np.arange(5))


# --- DataLoader: shuffling --------------------------------------------------------------


def test_shuffle_draws_its_order_from_the_global_generator():
    mg.manual_seed(7)
    order = labels_per_epoch(DataLoader(numbered(10), batch_size=3, shuffle=True))
    np.testing.assert_array_equal(order, np.random.default_rng(7).permutation(10))


def test_shuffle_is_reproducible_under_manual_seed():
    loader = DataLoader(numbered(50), batch_size=8, shuffle=True)
    mg.manual_seed(11)
    first = labels_per_epoch(loader)
    mg.manual_seed(11)
    np.testing.assert_array_equal(labels_per_epoch(loader), first)


def test_shuffle_gives_a_new_order_each_epoch():
    loader = DataLoader(numbered(50), batch_size=8, shuffle=True)
    assert not np.array_equal(labels_per_epoch(loader), labels_per_epoch(loader))


def test_every_sample_is_seen_exactly_once_per_shuffled_epoch():
    loader = DataLoader(numbered(23), batch_size=5, shuffle=True)
    for _ in range(3):
        assert sorted(labels_per_epoch(loader).tolist()) == list(range(23))


# --- DataLoader: collation --------------------------------------------------------------


def test_tuples_of_samples_become_lists_of_batch_tensors():
    batch = next(iter(DataLoader(Pairs(), batch_size=3)))  # a list, as in PyTorch
    assert isinstance(batch, list) and len(batch) == 2
    arrays, ints = batch
    assert arrays.shape == (3, 2) and arrays.dtype == np.float64
    assert ints.shape == (3,) and ints.dtype == np.int64


def test_python_floats_become_float64_and_bools_bool():
    assert default_collate([1.5, 2.5]).dtype == np.float64  # as PyTorch's default_collate
    assert default_collate([True, False]).dtype == np.bool_


def test_numpy_scalars_keep_their_dtype():
    assert default_collate([np.int64(1), np.int64(2)]).dtype == np.int64
    assert default_collate([np.float64(1), np.float64(2)]).dtype == np.float64


def test_dicts_and_namedtuples_are_collated_field_by_field():
    batch = default_collate([{"x": np.ones(2), "name": "a"}, {"x": np.zeros(2), "name": "b"}])
    assert batch["x"].shape == (2, 2) and batch["name"] == ["a", "b"]
    Point = namedtuple("Point", "x y")
    point = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(point, Point) and point.x.numpy().tolist() == [1, 3]


def test_tensor_samples_are_stacked():
    batch = default_collate([mg.ones(3), mg.zeros(3)])
    assert batch.shape == (2, 3)


def test_samples_of_different_shapes_are_an_error_that_suggests_collate_fn():
    with pytest.raises(ValueError, match=r"\(2,\), \(3,\).*collate_fn"):
        default_collate([np.zeros(2), np.zeros(3)])


def test_collate_fn_receives_the_list_of_samples():
    loader = DataLoader(numbered(5), batch_size=2, collate_fn=len)
    assert list(loader) == [2, 2, 1]


def test_batch_size_none_yields_single_samples():
    loader = DataLoader(Pairs(3), batch_size=None)
    assert len(loader) == 3
    samples = list(loader)
    assert samples[2][1] == 2 and samples[2][0].shape == (2,)


# --- DataLoader: errors -----------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [0, -2])
def test_batch_size_below_one_is_an_error(batch_size):
    with pytest.raises(ValueError, match=f"at least 1, got {batch_size}"):
        DataLoader(numbered(), batch_size=batch_size)


@pytest.mark.parametrize("batch_size", [2.5, "4", True])
def test_batch_size_that_is_not_an_int_is_an_error(batch_size):
    with pytest.raises(TypeError, match="batch_size must be an int"):
        DataLoader(numbered(), batch_size=batch_size)


def test_dataset_without_len_or_getitem_is_an_error():
    with pytest.raises(TypeError, match="generator.*TensorDataset"):
        DataLoader((i for i in range(3)), batch_size=2)


def test_drop_last_without_batch_size_is_an_error():
    with pytest.raises(ValueError, match="drop_last"):
        DataLoader(numbered(), batch_size=None, drop_last=True)


# --- make_moons -------------------------------------------------------------------------


def test_moons_shapes_dtypes_and_balanced_labels():
    X, y = make_moons(201)
    assert X.shape == (201, 2) and X.dtype == np.float32
    assert y.shape == (201,) and y.dtype == np.int64
    assert np.bincount(y).tolist() == [100, 101]


def test_moons_without_noise_lie_on_two_shifted_half_circles():
    X, y = make_moons(100, noise=0.0)
    upper, lower = X[y == 0], X[y == 1]
    np.testing.assert_allclose(np.hypot(*upper.T), 1, atol=1e-6)
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1, lower[:, 1] - 0.5), 1, atol=1e-6)
    assert (upper[:, 1] >= -1e-6).all() and (lower[:, 1] <= 0.5 + 1e-6).all()


def test_moons_classes_have_different_means():
    X, y = make_moons(400, noise=0.1)
    mean_0, mean_1 = X[y == 0].mean(axis=0), X[y == 1].mean(axis=0)
    assert mean_0[1] - mean_1[1] > 0.5  # the upper arc sits higher
    assert mean_1[0] - mean_0[0] > 0.5  # the lower arc is shifted right


def test_moons_rows_are_shuffled():
    _, y = make_moons(100)
    assert not (np.diff(y) >= 0).all()


# --- make_spirals -----------------------------------------------------------------------


def test_spirals_shapes_dtypes_and_classes():
    X, y = make_spirals(301, n_classes=3)
    assert X.shape == (301, 2) and X.dtype == np.float32 and y.dtype == np.int64
    assert np.bincount(y).tolist() == [101, 100, 100]


def test_spirals_radius_runs_from_zero_to_one():
    X, _ = make_spirals(300, noise=0.5)
    radius = np.hypot(*X.T)
    assert radius.min() < 1e-6 and np.isclose(radius.max(), 1)


# --- make_sequence_task -----------------------------------------------------------------


def test_sequence_task_shapes_dtypes_and_token_range():
    inputs, targets = make_sequence_task(50, seq_len=6, vocab_size=7)
    assert inputs.shape == targets.shape == (50, 6)
    assert inputs.dtype == targets.dtype == np.int64
    assert inputs.min() >= 0 and inputs.max() < 7


def test_reverse_task_targets_are_the_inputs_reversed():
    inputs, targets = make_sequence_task(20, seq_len=5, task="reverse")
    for row_in, row_out in zip(inputs, targets):
        assert row_out.tolist() == row_in.tolist()[::-1]


def test_sort_task_targets_are_the_inputs_sorted():
    inputs, targets = make_sequence_task(20, seq_len=5, task="sort")
    for row_in, row_out in zip(inputs, targets):
        assert row_out.tolist() == sorted(row_in.tolist())


def test_copy_task_targets_are_the_inputs():
    inputs, targets = make_sequence_task(20, task="copy")
    np.testing.assert_array_equal(inputs, targets)
    assert targets is not inputs


def test_sequence_task_unknown_task_names_the_choices():
    with pytest.raises(ValueError, match="'shuffle'.*'reverse', 'sort', 'copy'"):
        make_sequence_task(task="shuffle")


# --- characters -------------------------------------------------------------------------


def test_char_corpus_is_sentences_from_a_small_vocabulary():
    text = make_char_corpus(50)
    lines = text.splitlines()
    assert len(lines) == 50
    assert all(line.startswith("the ") and line.endswith(".") for line in lines)
    assert len(set(text)) <= 30


def test_char_tokenizer_round_trips_encode_and_decode():
    text = make_char_corpus(20)
    tokenizer = CharTokenizer(text)
    ids = tokenizer.encode(text)
    assert ids.dtype == np.int64 and ids.max() < tokenizer.vocab_size
    assert tokenizer.decode(ids) == text
    assert tokenizer.decode(mg.tensor(ids[:7])) == text[:7]


def test_char_tokenizer_vocabulary_is_the_sorted_characters():
    tokenizer = CharTokenizer("banana")
    assert tokenizer.itos == ["a", "b", "n"] and tokenizer.stoi == {"a": 0, "b": 1, "n": 2}
    assert tokenizer.vocab_size == 3


def test_char_tokenizer_unknown_character_is_an_error():
    with pytest.raises(ValueError, match=r"\['z'\] are not in the vocabulary"):
        CharTokenizer("banana").encode("bz")


def test_char_lm_targets_are_the_inputs_shifted_by_one():
    text = "the cat sat on the mat.\n"
    x, y = make_char_lm_dataset(text, block_size=5)
    assert x.shape == y.shape == (len(text) - 5, 5) and x.dtype == np.int64
    tokenizer = CharTokenizer(text)
    assert tokenizer.decode(x[0]) == "the c" and tokenizer.decode(y[0]) == "he ca"
    np.testing.assert_array_equal(x[1:], np.concatenate([x[:-1, 1:], y[:-1, -1:]], axis=1))


def test_char_lm_text_shorter_than_a_block_is_an_error():
    with pytest.raises(ValueError, match="4 characters"):
        make_char_lm_dataset("abcd", block_size=8)


# --- load_digits ------------------------------------------------------------------------


def test_digits_shapes_dtypes_and_pixel_range():
    X, y = load_digits()
    assert X.shape == (1797, 64) and X.dtype == np.float32
    assert y.shape == (1797,) and y.dtype == np.int64
    assert X.min() == 0 and X.max() == 16 and (X == np.round(X)).all()


def test_digits_class_counts_match_the_uci_test_set():
    _, y = load_digits()
    assert np.bincount(y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert np.bincount(y).sum() == 1797


def test_digits_first_image_is_a_zero():
    images, y = load_digits(images=True)
    assert images.shape == (1797, 8, 8)
    assert y[:10].tolist() == list(range(10))
    assert images[0, 0].tolist() == [0, 0, 5, 13, 9, 1, 0, 0]


def test_digits_without_return_x_y_gives_named_fields():
    digits = load_digits(return_X_y=False)
    np.testing.assert_array_equal(digits.images.reshape(1797, 64), digits.data)
    assert digits.target_names.tolist() == list(range(10))


# --- train_test_split -------------------------------------------------------------------


def test_train_test_split_sizes_round_the_test_set_up():
    X_train, X_test, y_train, y_test = train_test_split(np.zeros((10, 2)), np.arange(10),
                                                        test_size=0.25)
    assert (len(X_train), len(X_test), len(y_train), len(y_test)) == (7, 3, 7, 3)


def test_train_test_split_keeps_rows_paired_and_disjoint():
    X, y = numbered(30).tensors[0].numpy(), np.arange(30)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=10)
    np.testing.assert_array_equal(X_train[:, 0], y_train)
    np.testing.assert_array_equal(X_test[:, 0], y_test)
    assert sorted(np.concatenate([y_train, y_test]).tolist()) == list(range(30))


def test_train_test_split_without_shuffle_tests_on_the_last_rows():
    train, test = train_test_split(np.arange(10), test_size=0.2, shuffle=False)
    assert train.tolist() == list(range(8)) and test.tolist() == [8, 9]


def test_train_test_split_different_lengths_is_an_error():
    with pytest.raises(ValueError, match=r"\[10, 9\]"):
        train_test_split(np.zeros(10), np.zeros(9))


# --- randomness of the built-in data sets -----------------------------------------------

GENERATORS = {
    "moons": lambda seed: make_moons(50, seed=seed),
    "spirals": lambda seed: make_spirals(60, seed=seed),
    "sequence": lambda seed: make_sequence_task(20, seed=seed),
    "corpus": lambda seed: (make_char_corpus(10, seed=seed),),
    "split": lambda seed: train_test_split(np.arange(20), seed=seed),
}


def same(first, second) -> bool:
    return all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))


@pytest.mark.parametrize("name", GENERATORS)
def test_same_seed_gives_the_same_data(name):
    make = GENERATORS[name]
    assert same(make(3), make(3))
    assert not same(make(3), make(4))


@pytest.mark.parametrize("name", GENERATORS)
def test_seed_none_draws_from_the_global_generator(name):
    make = GENERATORS[name]
    mg.manual_seed(5)
    first = make(None)
    assert not same(make(None), first)  # the generator moved on
    mg.manual_seed(5)
    assert same(make(None), first)


@pytest.mark.parametrize("name", GENERATORS)
def test_int_seed_leaves_the_global_generator_alone(name):
    before = mg.get_rng_state()
    GENERATORS[name](3)
    assert mg.get_rng_state() == before


# --- WeightedRandomSampler --------------------------------------------------------------------


def test_weighted_sampler_draws_each_index_in_proportion_to_its_weight():
    from minigrad.data import WeightedRandomSampler

    sampler = WeightedRandomSampler([0.0, 1.0, 3.0], num_samples=40_000)
    counts = np.bincount(list(sampler), minlength=3) / 40_000
    assert len(sampler) == 40_000 and counts[0] == 0
    np.testing.assert_allclose(counts, [0.0, 0.25, 0.75], atol=0.01)
    mg.manual_seed(3)
    first = list(WeightedRandomSampler([1, 2, 3, 4], 10))
    mg.manual_seed(3)
    assert list(WeightedRandomSampler(mg.tensor([1.0, 2.0, 3.0, 4.0]), 10)) == first


def test_weighted_sampler_without_replacement_draws_each_index_once():
    from minigrad.data import WeightedRandomSampler

    drawn = list(WeightedRandomSampler([5.0, 0.0, 1.0, 1.0, 1.0], 4, replacement=False))
    assert sorted(drawn) == [0, 2, 3, 4]


def test_a_class_balanced_loader_with_a_weighted_sampler(torch):
    """The usual use, as in PyTorch's docs: weight each sample by 1 / its class count;
    the batches then hold both classes about equally. Same length as PyTorch's loader."""
    from minigrad.data import WeightedRandomSampler

    labels = np.array([0] * 90 + [1] * 10)
    weights = 1.0 / np.bincount(labels)[labels]
    dataset = TensorDataset(mg.tensor(np.arange(100.0)), mg.tensor(labels))
    loader = DataLoader(dataset, batch_size=50,
                        sampler=WeightedRandomSampler(weights, num_samples=2000))
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(100.0), torch.tensor(labels)),
        batch_size=50, sampler=torch.utils.data.WeightedRandomSampler(weights, 2000))
    assert len(loader) == len(theirs) == 40
    share = np.mean(np.concatenate([y.numpy() for _, y in loader]))
    assert 0.45 < share < 0.55


@pytest.mark.parametrize("arguments, message", [
    (([1.0, 2.0], 0), r"num_samples must be a positive int, got 0"),
    (([1.0, -2.0], 3), r"weights must be finite, >= 0 and not all 0, got min -2.0"),
    (([0.0, 0.0], 3), r"weights must be finite, >= 0 and not all 0, got min 0.0, max 0.0"),
    (([[1.0, 2.0]], 3), r"weights must be a non-empty sequence of numbers .* shape \(1, 2\)"),
    (([1.0, 0.0, 2.0], 3, False), r"cannot draw 3 samples without replacement from 2 with "
                                  r"weight > 0"),
])
def test_weighted_sampler_arguments_that_cannot_work_say_why(arguments, message):
    from minigrad.data import WeightedRandomSampler

    with pytest.raises(ValueError, match=rf"WeightedRandomSampler: {message}"):
        WeightedRandomSampler(*arguments)

"""``mg.testing.assert_close`` and ``mg.utils.benchmark.Timer``: PyTorch's rules and messages
(the same calls made on both libraries), and the Timer's measurements."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad.testing import assert_close
from minigrad.utils.benchmark import Timer


def outcome(check, *args, **kwargs) -> tuple[str, str]:
    try:
        check(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return type(error).__name__, str(error)
    return "ok", ""


def on_both(torch, build):
    """``build(library)`` gives the arguments of assert_close for that library."""
    args, kwargs = build(torch)
    theirs = outcome(torch.testing.assert_close, *args, **kwargs)
    args, kwargs = build(mg)
    return outcome(assert_close, *args, **kwargs), theirs


CALLS = {
    "close_float32": lambda t: ((t.tensor([1.0, 2.0]), t.tensor([1.0, 2.0 + 1e-6])), {}),
    "not_close": lambda t: ((t.tensor([1.0, 2.0, 3.0]), t.tensor([1.0, 2.5, 3.0])), {}),
    "not_close_2d": lambda t: ((t.tensor([[1.0, 2.0], [3.0, 4.0]]),
                                t.tensor([[1.0, 2.0], [3.0, 5.0]])), {}),
    "scalar_tensor": lambda t: ((t.tensor(1.0), t.tensor(2.0)), {}),
    "integers_exact": lambda t: ((t.tensor([1, 2]), t.tensor([1, 3])), {}),
    "given_tolerances": lambda t: ((t.tensor([1.0, 2.0]), t.tensor([1.0, 3.0])),
                                   {"rtol": 0.5, "atol": 0.0}),
    "zero_tolerances": lambda t: ((t.ones(2), t.zeros(2)), {"rtol": 0, "atol": 0}),
    "nan": lambda t: ((t.tensor([float("nan")]), t.tensor([float("nan")])), {}),
    "nan_equal": lambda t: ((t.tensor([float("nan")]), t.tensor([float("nan")])),
                            {"equal_nan": True}),
    "unchecked_dtype": lambda t: ((t.tensor([1.0, 2.0]), t.tensor([1, 2])),
                                  {"check_dtype": False}),
    "python_floats": lambda t: ((1.0, 1.1), {}),
    "int_and_float": lambda t: ((1, 1.0), {}),
    "nested_lists": lambda t: (([1.0, [2.0, 3.0]], [1.0, [2.0, 3.5]]), {}),
    "dict_item": lambda t: (({"a": t.ones(2)}, {"a": t.zeros(2)}), {}),
    "sequence_lengths": lambda t: (([t.ones(2)], [t.ones(2), t.ones(2)]), {}),
    "custom_message": lambda t: ((t.ones(2), t.zeros(2)), {"msg": "mine"}),
    "one_tolerance": lambda t: ((t.ones(2), t.ones(2)), {"rtol": 0.1}),
    "none": lambda t: ((None, 1.0), {}),
}


@pytest.mark.parametrize("name", CALLS)
def test_assert_close_passes_and_fails_as_pytorchs(torch, name):
    ours, theirs = on_both(torch, CALLS[name])
    assert ours == theirs


def test_assert_close_names_shapes_dtypes_and_keys_as_minigrad_spells_them():
    with pytest.raises(AssertionError, match=r"'shape' do not match: \(2,\) != \(3,\)"):
        assert_close(mg.ones(2), mg.ones(3))
    with pytest.raises(AssertionError, match="'dtype' do not match: float32 != float64"):
        assert_close(mg.ones(2), mg.ones(2, dtype=mg.float64))
    with pytest.raises(AssertionError, match=r"Missing keys in the actual mapping: \['b'\]"):
        assert_close({"a": 1.0}, {"b": 1.0})


def test_assert_close_compares_numpy_arrays_but_not_an_array_with_a_tensor():
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(mg.ones(2), np.ones(2, dtype=np.float32))


def test_timer_timeit_measures_number_runs_in_the_given_globals():
    calls = []
    measurement = Timer("calls.append(1)", globals={"calls": calls}).timeit(50)
    assert measurement.number_per_run == 50 and len(measurement.times) == 1
    assert len(calls) == 50 + 2  # and a warm-up of max(50 // 100, 2) runs
    assert measurement.mean == measurement.median == measurement.times[0] > 0
    assert "1 measurement, 50 runs" in repr(measurement)


def test_timer_has_torch_in_its_namespace_as_pytorchs_does():
    assert Timer("torch.ones(3).sum()").timeit(3).mean > 0


def test_blocked_autorange_runs_blocks_until_the_minimum_time():
    blocks = []
    measurement = Timer("sum(range(100))").blocked_autorange(
        callback=lambda number, seconds: blocks.append(number), min_run_time=0.02)
    assert sum(measurement.raw_times) >= 0.02
    assert blocks == [measurement.number_per_run] * len(measurement.raw_times)
    assert measurement.times == [t / measurement.number_per_run for t in measurement.raw_times]

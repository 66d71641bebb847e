"""The benchmarks compare like with like: each case's contenders (minigrad, the
hand-written NumPy version, PyTorch) do the same computation, step for step. bench/
measures the speed; these tests only check that what it times is the same work, and that
the command runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench import cases
from bench.harness import peak_memory

ROOT = Path(__file__).resolve().parent.parent


def losses(step, count: int = 3) -> list[float]:
    """The loss of ``count`` training steps in a row (each step updates the model)."""
    results = [step() for _ in range(count)]
    return [float(r.item()) if hasattr(r, "item") else float(r) for r in results]


@pytest.mark.parametrize("build", [cases.build_mlp, cases.build_mlp_overhead])
def test_mlp_minigrad_and_hand_written_numpy_take_the_same_steps(build):
    steps = build(cases.libraries(with_torch=False))
    mine, by_hand = losses(steps["minigrad"]), losses(steps["numpy"])
    np.testing.assert_allclose(mine, by_hand, rtol=1e-5)
    assert mine[2] < mine[0]  # the steps do train


@pytest.mark.parametrize("build", [cases.build_mlp, cases.build_mlp_overhead, cases.build_cnn,
                                   cases.build_transformer])
def test_minigrad_and_torch_run_the_same_model_step_for_step(torch, build):
    steps = build(cases.libraries(with_torch=True))
    np.testing.assert_allclose(losses(steps["minigrad"]), losses(steps["torch"]), rtol=2e-4)


@pytest.mark.parametrize("build", [cases.build_dispatch, cases.build_chain])
def test_graph_cases_give_torch_s_gradient(torch, build):
    libs = cases.libraries(with_torch=True)
    grads = {}
    for name, lib in libs.items():
        x = lib.tensor(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)).requires_grad_()
        (cases.tiny_ops if build is cases.build_dispatch else cases.long_chain)(lib, x)
        grads[name] = x.grad.numpy()
    np.testing.assert_allclose(grads["minigrad"], grads["torch"], rtol=1e-5, atol=1e-7)


def test_checkpointing_the_deep_mlp_at_least_halves_its_peak_memory():
    steps = cases.memory_steps(cases.libraries(with_torch=False)["minigrad"])
    plain, checkpointed = peak_memory(steps["plain"]), peak_memory(steps["checkpoint"])
    assert checkpointed <= plain / 2


def test_bench_command_prints_a_row_and_a_markdown_table():
    result = subprocess.run([sys.executable, "-m", "bench", "dispatch", "--rounds", "1",
                             "--processes", "1", "--no-torch", "--markdown"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "dispatch     minigrad" in result.stdout
    assert "| case | minigrad | hand-written NumPy | PyTorch | ratio (target) |" in result.stdout


def test_a_timed_case_is_the_median_of_its_processes_with_the_range_of_their_ratios():
    result = subprocess.run([sys.executable, "-m", "bench", "mlp", "--rounds", "1",
                             "--processes", "3"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("mlp"))
    assert "x numpy (" in row and "in 3 processes)" in row, row


def test_the_median_over_processes_is_of_each_process_s_own_ratio():
    from bench.__main__ import TIMED, summarize

    mlp = next(case for case in TIMED if case.name == "mlp")
    # three processes, one of them in a slow mode for both contenders alike
    row = summarize(mlp, [{"minigrad": 1.0, "numpy": 1.0}, {"minigrad": 2.1, "numpy": 2.0},
                          {"minigrad": 1.2, "numpy": 1.0}])
    assert (row.minigrad, row.numpy) == ("1.20 s", "1.00 s")  # the medians of each
    assert row.ratios.startswith("1.05x numpy (1.00-1.20 in 3 processes)"), row.ratios
    assert row.met is False  # the target is 1.03

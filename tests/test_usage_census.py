"""The census of PyTorch names in teaching code (docs/census/) stays true.

``scripts/usage_census.py --scan`` reads the programs (it needs their repositories and
PyTorch); what it keeps is data: the programs with their commits, and for each name the
programs that use it. These tests need neither: they re-resolve every name against
minigrad now and check that the recorded support, the figures and the tables agree.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import usage_census as census  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return census.load()


@pytest.fixture(scope="module")
def live(data):
    return {name: census.status(name) for name in data["uses"]}


def test_every_program_is_recorded_with_its_repository_and_commit(data):
    repositories = {s["repository"]: s["commit"] for s in data["sources"]}
    assert all(len(commit) == 40 for commit in repositories.values())
    assert {p.split(":", 1)[0] for p in data["programs"]} <= set(repositories)


def test_every_name_is_used_by_listed_programs(data):
    count = len(data["programs"])
    for name, programs in data["uses"].items():
        assert programs and all(0 <= p < count for p in programs), name


def test_the_recorded_support_of_each_name_is_what_minigrad_has_now(data, live):
    changed = {n: (data["status"][n], live[n]) for n in data["uses"]
               if data["status"][n] != live[n]}
    assert not changed, f"run scripts/usage_census.py --write; changed: {changed}"


def test_the_tables_and_figures_are_up_to_date():
    assert census.main([]) == 0, "run: .venv/bin/python scripts/usage_census.py --write"


@pytest.mark.parametrize("name, expected", [
    ("torch.nn.Linear", "supported"),
    ("torch.nn.Linear(bias=)", "supported"),
    ("Tensor.view", "supported"),
    ("import torch.nn.functional", "supported"),
    ("torch.fft", "refused"),
    ("torch.nn.Linear(no_such_keyword=)", "missing"),
    ("Tensor.no_such_method", "missing"),
])
def test_a_name_is_resolved_on_minigrad(name, expected):
    assert census.status(name) == expected


def test_the_scanner_records_names_keywords_and_call_forms():
    torch = pytest.importorskip("torch")
    source = ("import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader\n"
              "x = torch.rand(size=(2, 3))\nm = nn.Linear(2, 3, bias=False)\n"
              "y = x.sum(dim=1, keepdim=True).view(-1)\np = torch.Tensor(2, 3)\n"
              "p.data.add_(-0.1, x)\nmask = ~(x > 0)\nDataLoader(x, batch_size=2)\n")
    names = census.uses_of([source], torch)
    assert {"import torch.nn", "torch.rand(size=)", "torch.nn.Linear(2 positional)",
            "torch.nn.Linear(bias=)", "Tensor.sum(keepdim=)", "Tensor.view",
            "torch.Tensor(*sizes)", "Tensor.add_(alpha, other) (deprecated overload)",
            "Tensor.__invert__ (~ on a bool tensor)", "torch.utils.data.DataLoader",
            "torch.utils.data.DataLoader(batch_size=)"} <= names


def test_notebook_magics_and_d2l_tabs_are_read_as_python():
    assert census.without_magics("%matplotlib inline\n!pip install x\nimport torch") == \
        "pass\npass\nimport torch"
    chapter = ("```{.python .input}\n%%tab mxnet\nfrom mxnet import np\n```\n"
               "```{.python .input}\n%%tab pytorch\nimport torch\n```\n")
    assert census.code_of("c.md", chapter) == ["%%tab pytorch\nimport torch\n"]

"""The PyTorch surface minigrad offers is written down, and what is written is true.

`docs/pytorch_coverage.md` lists, per namespace, the PyTorch names minigrad has, its own
extras and what it leaves out on purpose; `scripts/pytorch_coverage.py` writes it (and the
README's table) from the code. `docs/api.md` is the API reference: every name it mentions
must exist.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import minigrad as mg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import pytorch_coverage as coverage  # noqa: E402
from minigrad.unsupported import ABSENT  # noqa: E402


def test_every_listed_name_exists_in_minigrad():
    for namespace, kinds in coverage.read_list().items():
        obj = coverage.resolve(coverage.NAMESPACES[namespace][0])
        for name in kinds["supported"] + kinds["extras"]:
            assert hasattr(obj, name), f"{namespace}.{name} is listed but minigrad lacks it"


def test_the_list_and_the_readme_table_are_up_to_date(torch):
    assert coverage.main([]) == 0, "run: .venv/bin/python scripts/pytorch_coverage.py --write"


def test_every_supported_name_is_pytorchs_own(torch):
    for namespace, kinds in coverage.read_list().items():
        theirs = coverage.torch_names(namespace)
        assert not set(kinds["supported"]) - theirs, namespace


@pytest.mark.parametrize("namespace, name", [(ns, n) for ns, names in ABSENT.items()
                                              for n in names])
def test_a_name_left_out_on_purpose_says_why_when_asked_for(namespace, name, torch):
    theirs = coverage.resolve(coverage.NAMESPACES[namespace][1])
    assert hasattr(theirs, name), f"{namespace}.{name} is not PyTorch's"
    obj = coverage.resolve(coverage.NAMESPACES[namespace][0])
    if namespace == "torch.Tensor":
        obj = mg.zeros(2)  # a tensor, as users ask it
    with pytest.raises(AttributeError, match=f"{re.escape(namespace)}.{name} is not "
                                             "supported by minigrad: .+"):
        getattr(obj, name)


def test_an_unknown_name_is_a_plain_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        mg.no_such_thing  # noqa: B018


def test_every_name_the_api_reference_mentions_exists():
    text = (ROOT / "docs" / "api.md").read_text()
    roots = {"mg": mg, "nn": mg.nn, "F": mg.nn.functional, "optim": mg.optim,
             "lr_scheduler": mg.optim.lr_scheduler, "Tensor": mg.Tensor}
    missing = []
    mention = r"`(mg|nn|F|optim|lr_scheduler)\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"
    for root, dotted in re.findall(mention, text):
        obj = roots[root]
        for part in dotted.split("."):
            if not hasattr(obj, part):
                missing.append(f"{root}.{dotted}")
                break
            obj = getattr(obj, part)
    assert not missing, f"docs/api.md mentions names minigrad lacks: {sorted(set(missing))}"

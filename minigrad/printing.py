"""How tensors print: ``mg.set_printoptions``, PyTorch's names for NumPy's print options.

One dict of options, read by ``Tensor.__repr__``; ``set_printoptions`` changes only the
options it is given (``profile=`` resets them all first, as in PyTorch).
"""

from __future__ import annotations

# None: NumPy's own setting (np.set_printoptions), as before set_printoptions existed
DEFAULTS = {"precision": 4, "threshold": 200, "edgeitems": None, "linewidth": None,
            "sci_mode": None}
PROFILES = {"default": DEFAULTS,
            "short": {**DEFAULTS, "precision": 2, "threshold": 1000, "edgeitems": 2},
            "full": {**DEFAULTS, "threshold": 2 ** 63 - 1}}
options = dict(DEFAULTS)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """PyTorch's ``torch.set_printoptions``: digits after the point, how many elements
    print before the middle is summarised as ``...``, line width, scientific notation."""
    if profile is not None:
        if profile not in PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of "
                             f"{', '.join(map(repr, PROFILES))}, got {profile!r}")
        options.update(PROFILES[profile])
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems,
             "linewidth": linewidth}
    options.update({k: v for k, v in given.items() if v is not None})
    options["sci_mode"] = sci_mode if sci_mode is not None or profile else options["sci_mode"]


def numpy_options() -> dict:
    """The options as ``np.array2string`` keywords."""
    keywords = {"precision": options["precision"], "threshold": options["threshold"]}
    if options["edgeitems"] is not None:
        keywords["edgeitems"] = options["edgeitems"]
    if options["linewidth"] is not None:
        keywords["max_line_width"] = options["linewidth"]
    if options["sci_mode"] is not None:
        keywords["suppress_small"] = not options["sci_mode"]
    return keywords

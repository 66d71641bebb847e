"""Every op case: the engine's table (op_cases.py) plus one table per family of the nn
Functions. test_ops.py and test_lazy_ops.py run them all."""

from __future__ import annotations

from op_cases import CASES as ENGINE_CASES
from op_cases_activation_loss import CASES as ACTIVATION_LOSS_CASES
from op_cases_convolution import CASES as CONVOLUTION_CASES
from op_cases_linear_attention import CASES as LINEAR_ATTENTION_CASES
from op_cases_nn_more import CASES as NN_MORE_CASES
from op_cases_tensor_ops import CASES as TENSOR_OPS_CASES
from op_cases_census import CASES as CENSUS_CASES
from op_cases_math import CASES as MATH_CASES
from op_cases_stats import CASES as STATS_CASES
from op_cases_layers_more import CASES as LAYERS_MORE_CASES
from op_cases_losses_more import CASES as LOSSES_MORE_CASES

CASES = (ENGINE_CASES + ACTIVATION_LOSS_CASES + CONVOLUTION_CASES + LINEAR_ATTENTION_CASES
         + NN_MORE_CASES + TENSOR_OPS_CASES + CENSUS_CASES + MATH_CASES + STATS_CASES
         + LAYERS_MORE_CASES + LOSSES_MORE_CASES)

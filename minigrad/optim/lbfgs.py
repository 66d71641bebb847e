"""L-BFGS: a quasi-Newton method. It remembers the last ``history_size`` steps s and the
changes of the gradient y they caused, and from them builds an approximation of the
inverse Hessian H (the "two-loop recursion"); the step direction is d = -H g.

Each ``step(closure)`` runs up to ``max_iter`` iterations, calling ``closure`` (which
zeroes the gradients, computes the loss, calls backward and returns the loss) whenever it
needs the loss and gradient at a new point:

    optimizer = mg.optim.LBFGS(model.parameters(), lr=1, line_search_fn="strong_wolfe")
    def closure():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss
    optimizer.step(closure)

The step length is ``lr`` (on the very first iteration at most lr / sum |g|), or, with
``line_search_fn="strong_wolfe"``, found by a line search satisfying the strong Wolfe
conditions. This is PyTorch's algorithm line for line, on one flat NumPy vector of all
parameters; the state lives in ``optimizer.state[first parameter]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..function import record_write
from ..lazy_mode import realize_readers
from ..state import enable_grad
from ..tensor import Tensor
from .optimizer import Optimizer


class LBFGS(Optimizer):
    """Limited-memory BFGS (Nocedal, 1980); ``step`` needs a closure."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1,
                 max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter "
                             "groups): pass the parameters as one list")
        self._params = self.param_groups[0]["params"]

    def check_options(self, group: dict[str, Any]) -> None:
        if not group["lr"] >= 0:
            raise ValueError(f"LBFGS: invalid lr={group['lr']!r}; it must be >= 0")
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{group['line_search_fn']!r}")

    def state_dict(self) -> dict[str, Any]:
        """As Optimizer's; the history lists are copied too, so the snapshot stays as it
        was when later steps change the history."""
        result = super().state_dict()
        for saved in result["state"].values():
            saved.update({key: _copied(value) for key, value in saved.items()
                          if isinstance(value, list)})
        return result

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """As Optimizer's, but the state (of the first parameter) holds flat vectors and
        lists of them, not arrays of the parameter's shape: they are taken as they are."""
        saved_state = state_dict.get("state", {}) if isinstance(state_dict, dict) else {}
        super().load_state_dict({**state_dict, "state": {}})
        self._params = self.param_groups[0]["params"]
        if saved_state:
            (saved,) = saved_state.values()
            self.state[self._params[0]] = {key: _copied(value) for key, value in saved.items()}

    # --- the parameters as one flat vector ----------------------------------------------

    def _gather_flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p.numel(), dtype=p.dtype) if p.grad is None
                               else p.grad.numpy().reshape(-1) for p in self._params])

    def _add_grad(self, step_size: float, update: np.ndarray) -> None:
        """Every parameter += step_size * its part of ``update``."""
        offset = 0
        for p in self._params:
            values = p.numpy(force=True)
            realize_readers(p)
            values += step_size * update[offset:offset + values.size].reshape(values.shape)
            record_write(p)
            offset += values.size

    def _clone_param(self) -> list[np.ndarray]:
        return [p.numpy().copy() for p in self._params]

    def _set_param(self, arrays: list[np.ndarray]) -> None:
        for p, values in zip(self._params, arrays):
            realize_readers(p)
            p.numpy(force=True)[...] = values
            record_write(p)

    def _evaluate(self, closure: Callable[[], Any]) -> float:
        with enable_grad():
            return float(closure())

    def _directional_evaluate(self, closure, x, t, d) -> tuple[float, np.ndarray]:
        """Loss and gradient at x + t d (the parameters are put back to x after)."""
        self._add_grad(t, d)
        loss = self._evaluate(closure)
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # --- the step -----------------------------------------------------------------------

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # noqa: C901 (PyTorch's)
        """Up to ``max_iter`` L-BFGS iterations; returns the loss ``closure`` gave first."""
        if closure is None:
            raise ValueError("LBFGS.step needs a closure that re-computes the loss: "
                             "optimizer.step(closure), closure() zeroes the gradients, "
                             "computes the loss, calls backward() and returns the loss")
        group = self.param_groups[0]
        lr, max_iter, max_eval = float(group["lr"]), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # the direction d = -H g
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep only pairs that curve upwards
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                al = [None] * num_old
                q = -flat_grad  # the two-loop recursion
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss

            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction any more
                break

            ls_func_evals = 0
            if group["line_search_fn"] is not None:
                x_init = self._clone_param()
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, step, direction: self._directional_evaluate(closure, x, step,
                                                                          direction),
                    x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:  # the closure is re-evaluated for the next iteration
                    loss = self._evaluate(closure)
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


def _copied(value: Any) -> Any:
    """A state entry copied: arrays (or tensors) as arrays, lists element by element."""
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if hasattr(value, "shape") and np.ndim(value) > 0:
        return np.array(value)
    return value.item() if hasattr(value, "item") else value


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clamped into ``bounds`` (default: between x1 and x2)."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):  # noqa: C901 (PyTorch's, kept line for line)
    """A step t along d satisfying the strong Wolfe conditions: sufficient decrease
    f(x + t d) <= f + c1 t gtd, and a slope |g(x + t d) . d| <= c2 |gtd|. First brackets
    such a t (growing it), then zooms in by cubic interpolation."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)  # extrapolate
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # reached the maximum number of evaluations
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point satisfies the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1],
                               bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:  # too close to an end
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals

"""Upstream's comparator hook (executorch devtools/inspector/
numerical_comparator/numerical_comparator_base.py): NumericalComparatorBase
with preprocessing(mapping) -> mapping, element_compare(a, b) -> float and
compare(mapping, aot_names, runtime_names) -> DataFrame, and the built-in
MSE, L1 and SNR comparators as its subclasses.

The library aligns the two sides (etc_numgap_run); calculate_numeric_gap
hands the aligned pairs to the comparator as upstream's mapping:
{(aot_debug_handle, aot_output): (runtime_debug_handle, runtime_output)}.
Arrays are numpy arrays (a hashable subclass, so they can be dict keys as
torch tensors are) or torch tensors with tensor_type="torch".
"""
import abc
import math
from collections.abc import Sequence


class NumericalComparatorBase(abc.ABC):
    """Upstream's base class: override element_compare (and optionally
    preprocessing); compare() runs preprocess -> element_compare -> frame."""

    def __init__(self, inspector=None):
        self._inspector = inspector

    @property
    def inspector(self):
        return self._inspector

    @inspector.setter
    def inspector(self, value):
        self._inspector = value

    def preprocessing(self, mapping):
        return mapping

    @abc.abstractmethod
    def element_compare(self, a, b):
        """A float distance between a (AOT/reference) and b (runtime)."""

    @staticmethod
    def _validate_preprocessing_output(processed):
        """Upstream's check of what preprocessing() returned: a dict (else
        TypeError) of (debug handle, output) -> (debug handle, output), each
        debug handle a tuple of ints (else ValueError)."""
        if not isinstance(processed, dict):
            raise TypeError(f"preprocessing() must return a dict, got {type(processed).__name__}. "
                            "Expected format: Dict[Tuple[DebugHandle, Any], Tuple[DebugHandle, "
                            "Any]]")
        for key, value in processed.items():
            for side, pair in (("key", key), ("value", value)):
                if not isinstance(pair, tuple) or len(pair) != 2:
                    raise ValueError(f"Invalid {side} format in preprocessed mapping: {pair}. "
                                     "Expected Tuple[DebugHandle, Any] where DebugHandle is "
                                     "Tuple[int, ...]")
                handle = pair[0]
                if not isinstance(handle, tuple) or not all(isinstance(x, int) for x in handle):
                    what = "AOT debug handle in key" if side == "key" else \
                        "runtime debug handle in value"
                    raise ValueError(f"Invalid {what}: {handle}. Expected Tuple[int, ...]")

    def compare(self, mapping, aot_debug_handle_to_op_names, runtime_debug_handle_to_op_names):
        def pair(a, b):
            sa = isinstance(a, Sequence)
            sb = isinstance(b, Sequence)
            if sa and sb:
                if len(a) != len(b):
                    raise ValueError(f"Sequences 'a' and 'b' must have the same length for "
                                     f"comparison. len(a): {len(a)} len(b): {len(b)}.")
                return [self.element_compare(x, y) for x, y in zip(a, b)]
            if not sa and not sb:
                return [self.element_compare(a, b)]
            raise ValueError("Both inputs 'a' and 'b' must be sequences or both must be "
                             "non-sequences.")

        processed = self.preprocessing(mapping)
        self._validate_preprocessing_output(processed)
        rows = []
        for (aot_handle, aot_out), (rt_handle, rt_out) in processed.items():
            if aot_out is None or rt_out is None:
                continue
            if isinstance(aot_out, Sequence) and len(aot_out) > 1:
                continue  # as upstream: a multi-output AOT item is not compared
            rows.append({
                "aot_debug_handle": aot_handle,
                "aot_ops": _op_names(aot_handle, aot_debug_handle_to_op_names),
                "aot_intermediate_output": aot_out,
                "runtime_ops": _op_names(rt_handle, runtime_debug_handle_to_op_names),
                "runtime_debug_handle": rt_handle,
                "runtime_intermediate_output": rt_out,
                "gap": pair(aot_out, rt_out),
            })
        try:
            import pandas as pd
        except ImportError:
            return rows
        return pd.DataFrame(rows)


def _op_names(handle, names):
    """Upstream's find_op_names: the names of every handle of the group, in order."""
    out = []
    for h in handle:
        for n in names.get((h,), []):
            if n not in out:
                out.append(n)
    return out or list(names.get(tuple(handle), []))


def _f64(x):
    import numpy as np
    if hasattr(x, "detach"):
        x = x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=np.float64)


def _diff(a, b):
    a, b = _f64(a), _f64(b)
    if a.shape != b.shape:
        if a.size != b.size:
            raise ValueError(f"shapes {a.shape} and {b.shape} differ")
        b = b.reshape(a.shape)
    return a, b, a - b


class MSEComparator(NumericalComparatorBase):
    """mean((a - b)^2) in float64."""
    distance = "MSE"

    def element_compare(self, a, b):
        import numpy as np
        _a, _b, d = _diff(a, b)
        return float(np.mean(d * d)) if d.size else 0.0


class L1Comparator(NumericalComparatorBase):
    """sum(|a - b|) in float64 (upstream's L1 is a sum)."""
    distance = "L1"

    def element_compare(self, a, b):
        import numpy as np
        _a, _b, d = _diff(a, b)
        return float(np.sum(np.abs(d)))


class SNRComparator(NumericalComparatorBase):
    """10 log10(mean(a^2) / mean((a - b)^2)) dB with a the reference, as
    upstream's formula: +inf when identical, NaN when both are all zeros
    (0 / 0), -inf when the reference is all zeros and the run is not."""
    distance = "SNR"

    def element_compare(self, a, b):
        import numpy as np
        a, _b, d = _diff(a, b)
        noise = float(np.mean(d * d)) if d.size else 0.0
        signal = float(np.mean(a * a)) if a.size else 0.0
        if noise == 0.0:
            return math.nan if signal == 0.0 else math.inf
        if signal == 0.0:
            return -math.inf
        return 10.0 * math.log10(signal / noise)


BUILTIN = {"MSE": MSEComparator, "L1": L1Comparator, "SNR": SNRComparator}


def is_plain_builtin(c):
    """A built-in comparator whose methods are not overridden: the library's
    own distance gives the same numbers, faster."""
    t = type(c)
    return (t in BUILTIN.values() and t.preprocessing is NumericalComparatorBase.preprocessing
            and t.compare is NumericalComparatorBase.compare)

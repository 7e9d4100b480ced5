"""etcompare: the ExecuTorch Inspector API on libetcompare.

    from etcompare import Inspector
    insp = Inspector(etdump_path="model.etdp", debug_buffer_path="debug.bin",
                     etrecord="model.etrecord")
    insp.print_data_tabular()

Names, defaults and return shapes are upstream's
(executorch.devtools.Inspector); see docs/python.md for the differences and
for what is beyond upstream (Inspector.compare, the numeric gap against any
reference, python3 -m etcompare.batch).

The library is loaded on first use of a name below, not at import, so that
`python3 -m etcompare.batch` can start its workers first.
"""
import importlib

import importlib.util as _util

try:  # said at import, not deep in the first call; found, not imported (fast start)
    _numpy = _util.find_spec("numpy")
except ValueError:  # sys.modules["numpy"] is None: blocked
    _numpy = None
if _numpy is None:
    raise ImportError("etcompare needs numpy: pip install numpy (or apt install "
                      "python3-numpy)")

from ._errors import DirectoryError, Error, MismatchError, NotFoundError

_EXPORTS = {"Inspector": "_inspector", "EventBlock": "_inspector", "Event": "_inspector",
            "PerfData": "_inspector", "TimeScale": "_inspector", "AccuracyResult": "_compare",
            "compare_results": "_compare", "NumericalComparatorBase": "_comparator",
            "MSEComparator": "_comparator", "L1Comparator": "_comparator",
            "SNRComparator": "_comparator", "ETRecord": "_graph", "parse_etrecord": "_graph"}

__all__ = ["Inspector", "EventBlock", "Event", "PerfData", "TimeScale", "Error",
           "AccuracyResult", "compare_results", "__version__", "library_path",
           "ETRecord", "parse_etrecord", "MismatchError", "NotFoundError", "DirectoryError",
           "NumericalComparatorBase",
           "MSEComparator", "L1Comparator", "SNRComparator"]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module("." + _EXPORTS[name], __name__), name)
    elif name in ("__version__", "library_path"):
        lib = importlib.import_module("._lib", __name__).lib
        value = lib.version if name == "__version__" else lib.path
    else:
        raise AttributeError(f"module 'etcompare' has no attribute '{name}'")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))

"""etcompare: the ExecuTorch Inspector API on libetcompare.

    from etcompare import Inspector
    insp = Inspector(etdump_path="model.etdp", debug_buffer_path="debug.bin",
                     etrecord="model.etrecord")
    insp.print_data_tabular()

Names, defaults and return shapes are upstream's
(executorch.devtools.Inspector); see docs/python.md for the differences and
for what is beyond upstream (Inspector.compare, the numeric gap against any
reference, python3 -m etcompare.batch).
"""
from ._lib import Error, lib as _lib_handle
from ._inspector import Event, EventBlock, Inspector, PerfData, TimeScale
from ._compare import AccuracyResult, compare_results

__version__ = _lib_handle.version
library_path = _lib_handle.path

__all__ = ["Inspector", "EventBlock", "Event", "PerfData", "TimeScale", "Error",
           "AccuracyResult", "compare_results", "__version__", "library_path"]

/*
 * etcompare/etcompare.h - the whole public API of libetcompare.
 *
 * Modules: common.h (status, errors), etdump.h (the ETDump model),
 * tensor.h (debug buffer, dtypes, tensor views), inspector.h (EventBlocks
 * and timing statistics), report.h (tables, TSV/CSV, JSON, output files),
 * torchsave.h (torch.save archives: reference outputs of an ETRecord),
 * profile.h (framework tax, memory, operator, module and delegate
 * summaries), perfdiff.h (performance diff against a baseline ETDump),
 * bundled.h (BundledProgram files: test inputs and expected outputs).
 */
#ifndef ETCOMPARE_ETCOMPARE_H
#define ETCOMPARE_ETCOMPARE_H

#include "accuracy.h"
#include "agreement.h"
#include "binding.h"
#include "bundled.h"
#include "common.h"
#include "consistency.h"
#include "etdump.h"
#include "etrecord.h"
#include "html.h"
#include "inspector.h"
#include "legacy.h"
#include "metrics.h"
#include "npz.h"
#include "numgap.h"
#include "numgap_dist.h"
#include "output.h"

#include "perfdiff.h"
#include "plot.h"
#include "profile.h"
#include "reference.h"
#include "report.h"
#include "sniff.h"
#include "taps.h"
#include "tensor.h"
#include "text.h"
#include "torchsave.h"
#include "trace.h"

#endif

//===- Trace.h - Simulated timeline and report output -----------*- C++ -*-===//
//
// The Chrome trace (chrome://tracing, Perfetto) of a simulated iteration: one
// track per device and per link (only links that carry something), one
// complete event ("ph": "X") per task, timestamps in microseconds. And the
// simulation report as JSON, for soapc --report.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_TRACE_H
#define SOAP_SIMULATOR_TRACE_H

#include "soap/Simulator/Simulator.h"

#include "llvm/Support/JSON.h"

#include <string>

namespace soap {

/// {"traceEvents": [...], "displayTimeUnit": "ms"}.
std::string writeChromeTrace(const Simulator &sim);

/// {"model", "machine", "devices", "predicted_iteration_ms",
///  "device_busy_ms": [..], "link_busy_ms": {name: ms, ...} (busy links),
///  "communication_bytes", "memory_bytes_per_device": [..],
///  "peak_memory_bytes_per_device", "over_capacity", "tasks",
///  "configs": [{"name", "degrees", "devices"}]}
llvm::json::Object reportToJSON(const Simulator &sim);

} // namespace soap

#endif // SOAP_SIMULATOR_TRACE_H

//===- LoopKind.h - Kinds of loops in the SOAP space ------------*- C++ -*-===//
//
// Plain C++ (no MLIR): shared by the MLIR analyses and the simulator.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_LOOPKIND_H
#define SOAP_SIMULATOR_LOOPKIND_H

#include <cstdint>

namespace soap {

/// The role of one loop of an operator's iteration space (DESIGN.md, "The SOAP
/// space, generalized").
enum class LoopKind : uint8_t {
  /// Parallel loop over the batch dimension of the op's input.
  Sample,
  /// Any other parallel loop (height, width, sequence, ...).
  Attribute,
  /// Parallel loop that indexes a parameter (weight) and the output.
  Parameter,
  /// Reduction loop: splitting it leaves partial sums to combine.
  Reduction,
};

/// One letter per kind: S, A, P or R.
inline char loopKindLetter(LoopKind kind) {
  switch (kind) {
  case LoopKind::Sample:
    return 'S';
  case LoopKind::Attribute:
    return 'A';
  case LoopKind::Parameter:
    return 'P';
  case LoopKind::Reduction:
    return 'R';
  }
  return '?';
}

/// Full name of a kind ("sample", "attribute", "parameter", "reduction").
inline const char *loopKindName(LoopKind kind) {
  switch (kind) {
  case LoopKind::Sample:
    return "sample";
  case LoopKind::Attribute:
    return "attribute";
  case LoopKind::Parameter:
    return "parameter";
  case LoopKind::Reduction:
    return "reduction";
  }
  return "unknown";
}

/// Parses a letter (S, A, P, R); returns false on anything else.
inline bool parseLoopKindLetter(char letter, LoopKind &kind) {
  switch (letter) {
  case 'S':
    kind = LoopKind::Sample;
    return true;
  case 'A':
    kind = LoopKind::Attribute;
    return true;
  case 'P':
    kind = LoopKind::Parameter;
    return true;
  case 'R':
    kind = LoopKind::Reduction;
    return true;
  default:
    return false;
  }
}

} // namespace soap

#endif // SOAP_SIMULATOR_LOOPKIND_H

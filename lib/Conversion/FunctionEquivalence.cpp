//===- FunctionEquivalence.cpp - Functions that compute the same ----------===//

#include "FunctionEquivalence.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::soap;

/// The function's attributes without its symbol name.
static DictionaryAttr attributesButName(FunctionOpInterface func) {
  NamedAttrList attributes(func->getAttrs());
  attributes.erase(SymbolTable::getSymbolAttrName());
  return attributes.getDictionary(func->getContext());
}

/// A hash of what `func` computes: its attributes but its name, and its
/// body's ops (names, attributes and types, in order; not SSA names or
/// locations).
static llvm::hash_code structuralHash(FunctionOpInterface func) {
  llvm::hash_code hash = hash_value(attributesButName(func));
  func.getFunctionBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

bool mlir::soap::areEquivalentFunctions(FunctionOpInterface a,
                                        FunctionOpInterface b) {
  return a->getName() == b->getName() &&
         attributesButName(a) == attributesButName(b) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getFunctionBody(), &b.getFunctionBody(),
             OperationEquivalence::IgnoreLocations);
}

FunctionOpInterface EquivalentFunctions::find(FunctionOpInterface func) const {
  auto it = byHash.find(structuralHash(func));
  if (it == byHash.end())
    return {};
  for (FunctionOpInterface other : it->second)
    if (areEquivalentFunctions(other, func))
      return other;
  return {};
}

void EquivalentFunctions::add(FunctionOpInterface func) {
  byHash[structuralHash(func)].push_back(func);
}

// Finding an op of a built graph by name, for the tests that check one op's numbers.
#pragma once

#include <cstring>

#include "op_graph.h"

namespace tp::test {

// The first op of the graph's layer called `name`, or nullptr when the layer has none.
inline const Op* find_layer_op(const OpGraph& g, const char* name) {
  for (const Op& op : g.layer) {
    if (std::strcmp(op.name, name) == 0) return &op;
  }
  return nullptr;
}
// A temporary graph would leave the pointer dangling: keep the graph in a variable.
const Op* find_layer_op(const OpGraph&& g, const char* name) = delete;

}  // namespace tp::test

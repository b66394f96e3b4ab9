// The section readers of a scenario file: training:, parallel:, costs:, memory: (docs/scenario-reference.md).
// Each reads its keys strictly from a MapReader over the section; scenario.cpp assembles them into a Scenario.
#pragma once

#include "specs.h"
#include "yaml_reader.h"

namespace tp {

TrainingSpec read_training(MapReader& r);
ParallelSpec read_parallel(MapReader& r);
CostSpec read_costs(MapReader& r);
MemorySettings read_memory(MapReader& r, Framework framework);

}  // namespace tp

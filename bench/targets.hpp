// The performance targets for this 2-core machine, checked against one run's figures.
#pragma once

#include "bench/report.hpp"

namespace psgrad::bench {

// Adds one TargetCheck per target whose figures the report has.
void check_targets(Report& report);

}  // namespace psgrad::bench

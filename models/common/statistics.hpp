// Small-sample statistics for the sampled simulation's error bounds (docs/sampling.md).
#pragma once

#include <cstddef>

namespace gpusc {

// The two-sided 95 % quantile of Student's t distribution with `dof` degrees of freedom (at
// least 1): the multiple of a standard error that a 95 % interval spans when the spread itself
// is estimated from dof + 1 samples (12.71 for 1, 4.30 for 2, 3.18 for 3, 1.96 in the limit).
double studentT95(size_t dof);

}  // namespace gpusc

#include "common/statistics.hpp"

#include <boost/math/distributions/students_t.hpp>

#include "common/error.hpp"

namespace gpusc {

double studentT95(size_t dof) {
  if (dof == 0) throw InternalError("studentT95: no degrees of freedom");
  const boost::math::students_t t(static_cast<double>(dof));
  return boost::math::quantile(t, 0.975);
}

}  // namespace gpusc

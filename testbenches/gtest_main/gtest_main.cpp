// gpusc::gtest_main: the main() of a GoogleTest testbench that uses gpusc.
//
// libsystemc defines main() itself and calls the program's sc_main(). A GoogleTest testbench
// linked with GTest::gtest (without gtest_main) therefore gets libsystemc's main(), which runs an
// empty sc_main: the SystemC banner, no test, exit code 0 - a silent false pass. Linking this
// library instead of GTest::gtest_main gives the testbench this main() and an sc_main in the
// same object file, so the linker always takes both from here, and:
//   - runs every selected test (RUN_ALL_TESTS) with the usual --gtest_* options;
//   - fails (exit code 1, one line on stderr) when no test was selected or ran: a testbench
//     without tests, or a --gtest_filter that matches nothing, cannot pass by running nothing.
// Listing the tests (--gtest_list_tests, as gtest_discover_tests does) is not a run and exits 0.
#include <cstdio>

#include <gtest/gtest.h>
#include <systemc>  // declares sc_main with the linkage libsystemc expects

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  if (GTEST_FLAG_GET(list_tests)) return rc;
  const testing::UnitTest& u = *testing::UnitTest::GetInstance();
  if (u.test_to_run_count() == 0) {
    std::fprintf(stderr,
                 "gpusc::gtest_main: error: no test ran (%d defined, none selected): a testbench "
                 "that runs nothing does not pass\n",
                 u.total_test_count());
    return 1;
  }
  return rc;
}

// Never called: main() above is the program's entry point. libsystemc references sc_main, and
// defining it here (beside main) is what makes the linker pick this main over libsystemc's.
int sc_main(int, char*[]) {
  std::fprintf(stderr, "gpusc::gtest_main: internal error: SystemC's main() ran instead\n");
  return 4;
}

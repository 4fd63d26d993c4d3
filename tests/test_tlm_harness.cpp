// The TLM test benches of tests/support/tlm_harness.hpp: timing of a fixed-latency target,
// END_REQ back-pressure, and independent simulations in one process.
#include <gtest/gtest.h>

#include "support/tlm_harness.hpp"

using namespace gpusc;
using namespace gpusc::test;

namespace {

TEST(TlmHarness, FixedLatencyAnswersAndBackPressure) {
  for (int round = 0; round < 2; ++round) {  // two simulations in one process
    newSimulation();
    const Clock clk(700);
    ScriptedInitiator ini("initiator", clk);
    RecordingTarget tgt("target", clk, 10, 2);
    ini.socket.bind(tgt.socket);
    for (uint64_t i = 0; i < 4; ++i) ini.add(Request{i, 0x1000 + 128 * i});
    sc_core::sc_start();
    ASSERT_TRUE(ini.allAnswered());
    const auto& o = ini.outcomes();
    // Two are accepted at once; the third waits for the first answer (cycle 10), the fourth
    // for the second (cycle 11).
    EXPECT_EQ(o[0].accepted, 0u);
    EXPECT_EQ(o[0].answered, 10u);
    EXPECT_EQ(o[1].answered, 11u);
    EXPECT_EQ(o[2].accepted, 10u);
    EXPECT_EQ(o[2].answered, 20u);
    EXPECT_EQ(o[3].sent, 10u);  // held back until the third was accepted
    EXPECT_EQ(o[3].accepted, 11u);
    EXPECT_EQ(o[3].answered, 21u);
    ASSERT_EQ(tgt.received().size(), 4u);
    EXPECT_EQ(tgt.received()[3].addr, 0x1000u + 3 * 128);
  }
}

}  // namespace

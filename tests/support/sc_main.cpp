// libsystemc defines main() and references sc_main(); gpusc's executables have their own
// main() and drive SystemC themselves (models/gpu/timing_engine.cpp), so this is never called.
#include <systemc>  // declares sc_main with the linkage libsystemc expects

int sc_main(int, char*[]) { return 0; }

#pragma once
// What the bench programs share: timing in thread CPU time, heap allocations counted by the
// global operator new that bench/measure.cc replaces, and reading a body file. Link
// measure.cc into each bench binary. Single-threaded benches only.
#include <functional>
#include <string>

namespace rw::bench {

// Heap allocations so far (operator new calls of the whole program).
unsigned long long AllocCount();

struct Stat {
  double ns = 0;      // median thread CPU time per call
  double allocs = 0;  // heap allocations per call
};

// Median over `rounds` of the mean thread CPU time of a batch of calls sized to last ~20 ms.
// Thread CPU time: on a shared machine the wall clock also counts the time other processes
// held the core; this does not.
Stat Measure(const std::function<void()>& f, int rounds);

// The whole file; exits with status 2 when it cannot be read.
std::string ReadFile(const std::string& path);

}  // namespace rw::bench

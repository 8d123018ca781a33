#pragma once
// Heap allocations of the whole program, counted by the global operator new that
// bench/alloc_count.cc replaces (link that file into the bench binary). A caller takes the
// difference around the code it measures. Single-threaded benches only.
namespace rw::bench {
unsigned long long AllocCount();
}  // namespace rw::bench

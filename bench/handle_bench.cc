// In-process cost of one admission review, without sockets, TLS or HTTP: the whole
// `admission::Webhook::Handle` and each stage it is made of, on the bench bodies
// (bench/make_reviews.py), with the embedded default policy. Median time and heap allocations
// per call. `--loop` runs one case for a while so `perf record` can sample it.
//
//   handle_bench BODY_DIR [ROUNDS=15]
//   handle_bench BODY_DIR --loop BODY mutate|validate SECONDS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "measure.h"
#include "rdma_webhook/admission/review.h"
#include "rdma_webhook/admission/webhook.h"
#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/workload/workload.h"

namespace {

using Clock = std::chrono::steady_clock;
using rw::bench::Measure;
using rw::bench::ReadFile;

using nlohmann::json;
namespace adm = rw::admission;

volatile std::size_t g_sink = 0;  // keeps results alive so the optimiser cannot drop the work

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: handle_bench BODY_DIR [ROUNDS] | BODY_DIR --loop BODY EP SECS\n");
    return 2;
  }
  const std::string dir = argv[1];
  const rw::policy::Policy& policy = rw::policy::DefaultPolicy();
  const adm::Webhook webhook;

  if (argc >= 6 && std::string(argv[2]) == "--loop") {
    const std::string body = ReadFile(dir + "/" + argv[3] + ".json");
    const auto ep =
        std::string(argv[4]) == "validate" ? adm::Endpoint::kValidate : adm::Endpoint::kMutate;
    const double secs = std::atof(argv[5]);
    const auto end = Clock::now() + std::chrono::duration<double>(secs);
    long n = 0;
    while (Clock::now() < end) {
      for (int i = 0; i < 64; ++i) g_sink = g_sink + webhook.Handle(ep, body, policy).body.size();
      n += 64;
    }
    std::printf("%ld calls\n", n);
    return 0;
  }
  const int rounds = argc >= 3 ? std::atoi(argv[2]) : 15;

  std::printf("%-16s %-42s %10s %10s\n", "body", "stage", "us/call", "allocs");
  for (const char* name : {"pod-3k", "job-10k", "pytorchjob-30k"}) {
    const std::string body = ReadFile(dir + "/" + name + ".json");
    const adm::Request request = adm::DecodeReview(body);
    const std::string ns = request.ns;
    const auto w = rw::workload::Workload::Read(request.object, policy, ns);
    const adm::Decision mutate_decision =
        adm::Decide(adm::Endpoint::kMutate, adm::DecodeReview(body), policy);
    const adm::Decision validate_decision =
        adm::Decide(adm::Endpoint::kValidate, adm::DecodeReview(body), policy);

    // The stages of Decide (src/admission/webhook.cc) in the order a review meets them; the
    // indented ones are parts of the line above them.
    const std::vector<std::pair<std::string, std::function<void()>>> stages = {
        {"Handle(/mutate)  [total]",
         [&] {
           g_sink = g_sink + webhook.Handle(adm::Endpoint::kMutate, body, policy).body.size();
         }},
        {"Handle(/validate) [total]",
         [&] {
           g_sink = g_sink + webhook.Handle(adm::Endpoint::kValidate, body, policy).body.size();
         }},
        {"  DecodeReview(body) [DOM + fields, freed]",
         [&] { g_sink = g_sink + adm::DecodeReview(body).uid.size(); }},
        {"    ParseDom in its arena [the DOM, freed]",
         [&] {
           const rw::codec::DomArena arena(body.size());
           const boost::json::value dom =
               rw::codec::ParseDom(body, rw::codec::kMaxNestingDepth, arena.storage());
           g_sink = g_sink + dom.as_object().size();
         }},
        {"  Workload::Read(object)",
         [&] {
           g_sink =
               g_sink + rw::workload::Workload::Read(request.object, policy, ns).templates.size();
         }},
        {"  Assess(workload)",
         [&] { g_sink = g_sink + rw::rules::Assess(w, policy).templates.size(); }},
        {"  Diagnose(assessment) [/validate]",
         [&] {
           g_sink = g_sink + rw::rules::Diagnose(rw::rules::Assess(w, policy)).findings.size();
         }},
        {"  copy of object [feeds the next line]",
         [&] {
           const rw::codec::DomArena arena(body.size());
           const boost::json::value copy(request.object, arena.storage());
           g_sink = g_sink + copy.as_object().size();
         }},
        {"  MutateInPlace(workload, copy) [/mutate]",
         [&] {
           const rw::codec::DomArena arena(body.size());
           boost::json::value copy(request.object, arena.storage());
           g_sink = g_sink + rw::mutate::MutateInPlace(w, copy, policy).patch.size();
         }},
        {"  EncodeReview(mutate response)",
         [&] {
           g_sink =
               g_sink + adm::EncodeReview(request.api_version, mutate_decision.response).size();
         }},
        {"  EncodeReview(validate response)",
         [&] {
           g_sink =
               g_sink + adm::EncodeReview(request.api_version, validate_decision.response).size();
         }},
    };
    for (const auto& [label, f] : stages) {
      const rw::bench::Stat s = Measure(f, rounds);
      std::printf("%-16s %-42s %10.1f %10.0f\n", name, label.c_str(), s.ns / 1000, s.allocs);
    }
    std::printf("%-16s %-42s %10zu\n", name, "  body bytes", body.size());
    std::fflush(stdout);
  }
  return 0;
}

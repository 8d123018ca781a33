// The YAML reader: codec::ParseStream in both duplicate-key modes, and codec::ToYaml of every
// value it read.
//
// Invariants:
//  - ParseStream never throws: a broken document is a document with `error`, not an exception;
//  - a document has a value or an error or is empty, never both a value and an error;
//  - both modes split the stream into the same documents, and every document kRefuse reads
//    without error kLastWins reads to the same value;
//  - ToYaml of a value reads back (in either mode) as exactly one document holding that value.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "rdma_webhook/codec/yaml.h"

namespace {

using nlohmann::json;
using rw::codec::DuplicateKeys;
using rw::fuzz::Check;

void CheckRoundTrip(const json& value) {
  const std::string yaml = rw::codec::ToYaml(value);
  const auto again = rw::codec::ParseStream(yaml, DuplicateKeys::kRefuse);
  Check(again.size() == 1, "ToYaml does not read back as one document", yaml);
  Check(again[0].error.empty(), "ToYaml does not read back without error",
        again[0].error + "\n" + yaml);
  Check(again[0].value.has_value(), "ToYaml reads back as an empty document", yaml);
  Check(*again[0].value == value, "ToYaml does not read back as the same value",
        value.dump(-1, ' ', false, json::error_handler_t::replace) + "\n" + yaml + "\n" +
            again[0].value->dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto strict = rw::codec::ParseStream(text, DuplicateKeys::kRefuse);
  const auto lenient = rw::codec::ParseStream(text, DuplicateKeys::kLastWins);
  Check(strict.size() == lenient.size(), "the two modes split the stream differently");
  for (std::size_t i = 0; i < strict.size(); ++i) {
    Check(strict[i].index == i && lenient[i].index == i, "document index out of order");
    Check(strict[i].line == lenient[i].line, "the modes disagree on where a document starts");
    Check(!(strict[i].value && !strict[i].error.empty()), "a document with value and error");
    Check(!(lenient[i].value && !lenient[i].error.empty()), "a document with value and error");
    Check(lenient[i].error.empty() || !strict[i].error.empty(),
          "kLastWins refuses what kRefuse reads", lenient[i].error);
    if (strict[i].value) {
      Check(lenient[i].value && *lenient[i].value == *strict[i].value,
            "the modes read a document differently");
    }
    if (lenient[i].value) CheckRoundTrip(*lenient[i].value);
  }
  return 0;
}

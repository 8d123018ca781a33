// The rule registry: the rows the build collected from src/rules/catalog/ in their order, and
// their reference read from the documentation files embedded beside them.
#include "registry.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::rules {
namespace {

using nlohmann::json;

class DocReader {
 public:
  DocReader(const RuleDocText& text, const json& object, std::string where)
      : text_(text), object_(object), where_(std::move(where)) {}

  // The keys a reference may have; any other is a typo that would silently drop a field.
  void OnlyKeys(std::initializer_list<std::string_view> keys) const {
    for (const auto& [key, value] : object_.items())
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) Fail("unknown key '" + key + "'");
  }
  std::string Text(const char* key, bool required = true) const {
    const auto it = object_.find(key);
    if (it == object_.end()) {
      if (required) Fail("'" + std::string(key) + "' is missing");
      return {};
    }
    if (!it->is_string() || it->get_ref<const std::string&>().empty())
      Fail("'" + std::string(key) + "' must be a non-empty string");
    return it->get<std::string>();
  }
  const json& Mapping(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end() || !it->is_object())
      Fail("'" + std::string(key) + "' must be a mapping");
    return *it;
  }
  [[noreturn]] void Fail(const std::string& problem) const {
    throw std::logic_error(std::string(text_.file) + ": " + where_ + problem);
  }

 private:
  const RuleDocText& text_;
  const json& object_;
  std::string where_;
};

struct References {
  std::deque<OwnedRuleDoc> owned;  // a deque: RuleDoc views stay valid as it grows
  std::deque<RuleDoc> docs;
  std::vector<RuleReference> list;
};

const References& BuildReferences() {
  static const References kReferences = [] {
    References r;
    for (const Rule* rule : Rules()) {
      const auto& texts = CatalogDocs();
      const auto text = std::find_if(texts.begin(), texts.end(),
                                     [&](const RuleDocText& t) { return t.id == rule->id; });
      if (text == texts.end())
        throw std::logic_error("rule '" + std::string(rule->id) + "' has no src/rules/docs/" +
                               std::string(rule->id) + ".yaml");
      const auto& o = r.owned.emplace_back(ReadRuleDoc(*text));
      r.docs.push_back({.summary = o.summary,
                        .severity_note = o.severity_note,
                        .fires = o.fires,
                        .why = o.why,
                        .fix = o.fix,
                        .example = o.example,
                        .example_severity = o.example_severity,
                        .example_policy = o.example_policy});
      r.list.push_back({rule->id, rule->severity, &r.docs.back()});
    }
    return r;
  }();
  return kReferences;
}

}  // namespace

OwnedRuleDoc ReadRuleDoc(const RuleDocText& text) {
  auto documents = codec::ParseStream(text.text);
  const json empty;
  if (documents.size() != 1 || !documents[0].value || !documents[0].value->is_object()) {
    const std::string problem = documents.size() == 1 && !documents[0].error.empty()
                                    ? documents[0].error
                                    : "must be one YAML mapping";
    DocReader(text, empty, "").Fail(problem);
  }
  const json& object = *documents[0].value;
  const DocReader top(text, object, "");
  top.OnlyKeys({"summary", "severityNote", "fires", "why", "fix", "example"});
  OwnedRuleDoc doc;
  doc.summary = top.Text("summary");
  doc.severity_note = top.Text("severityNote", false);
  doc.fires = top.Text("fires");
  doc.why = top.Text("why");
  doc.fix = top.Text("fix");
  const DocReader example(text, top.Mapping("example"), "example: ");
  example.OnlyKeys({"severity", "manifest", "policy"});
  const std::string severity = example.Text("severity");
  if (severity != "error" && severity != "warning")
    example.Fail("'severity' must be error or warning, not '" + severity + "'");
  doc.example_severity = severity == "error" ? Severity::kError : Severity::kWarning;
  doc.example = example.Text("manifest");
  doc.example_policy = example.Text("policy", false);
  return doc;
}

const std::vector<const Rule*>& Rules() {
  static const std::vector<const Rule*> kRules = [] {
    auto rules = CatalogRules();
    std::stable_sort(rules.begin(), rules.end(),
                     [](const Rule* a, const Rule* b) { return a->position < b->position; });
    return rules;
  }();
  return kRules;
}

const std::vector<RuleInfo>& RuleTable() {
  static const std::vector<RuleInfo> kTable = [] {
    std::vector<RuleInfo> out;
    for (const Rule* r : Rules()) out.push_back({r->id, r->severity});
    return out;
  }();
  return kTable;
}

const std::vector<RuleReference>& RuleReferences() { return BuildReferences().list; }

}  // namespace rw::rules

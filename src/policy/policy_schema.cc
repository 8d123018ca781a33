// The policy file's JSON Schema, built from the same tables the parser reads (the modes, the
// paths, the rule ids), so `policy schema` and the chart's values schema cannot fall behind it.
// The schema is a first check, not the parser: what it cannot say (a mode's required section
// once defaults are applied, two sriov networks on one interface) only `policy validate` finds.
#include "modes/mode.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/policy/schema.h"
#include "schema_parts.h"

namespace rw::policy {
namespace {

using schema::Schema;

using modes::AllowedPathNames;
using modes::ModeNames;

Schema Rules() {
  Schema ids = Schema::array();
  for (const auto id : KnownRuleIds()) ids.push_back(std::string(id));
  return {{"type", "object"},
          {"description", "rule id: error | warning | off (rdma-webhook rules lists the ids)"},
          {"propertyNames", {{"enum", ids}}},
          {"additionalProperties", schema::Enum({"error", "warning", "warn", "off"})}};
}

Schema Nccl() {
  return schema::Object(
      {{"fabric", schema::Enum({"roce", "ib", "auto"})},
       {"gidIndex",
        {{"anyOf",
          {{{"const", "auto"}}, {{"type", "integer"}, {"minimum", 0}, {"maximum", 65535}}}}}},
       {"hca", schema::String()},
       {"debugForVerify", schema::Boolean()},
       {"gdrLevel",
        {{"type", "string"}, {"pattern", "^(LOC|NVL|NVB|C2C|PIX|PXB|P2C|PXN|PHB|SYS|[0-9]*)$"}}},
       {"extraEnv",
        {{"type", "object"},
         {"propertyNames", {{"pattern", "^[A-Za-z_][A-Za-z0-9_]*$"}}},
         {"additionalProperties", {{"type", {"string", "number", "boolean"}}}}}}});
}

// A namespace entry; `defaults` is the same without `names`.
Schema NamespaceEntry(bool with_names) {
  Schema fields = Schema::object();
  if (with_names) {
    fields["names"] = schema::Strings();
    fields["names"]["minItems"] = 1;
  }
  fields["mode"] = schema::Enum(ModeNames());
  fields["validation"] = schema::Enum({"deny", "warn", "warning", "off"});
  fields["allowedPaths"] = {{"type", "array"}, {"items", schema::Enum(AllowedPathNames())}};
  fields["exclusiveNodes"] = schema::Boolean();
  fields["onConflict"] = schema::Enum({"reject", "override"});
  fields["optOut"] = schema::Boolean();
  fields["injectShm"] = schema::Boolean();
  fields["rules"] = Rules();
  for (const modes::Row* row : modes::Rows())
    if (row->section_schema != nullptr) fields[std::string(row->name)] = row->section_schema();
  fields["nccl"] = Nccl();
  Schema entry = schema::Object(std::move(fields));
  if (with_names) entry["required"] = {"names"};
  return entry;
}

Schema Kind() {
  Schema kind = schema::Object(
      {{"group", schema::String()},
       {"kind", {{"type", "string"}, {"minLength", 1}}},
       {"templates",
        {{"type", "array"},
         {"minItems", 1},
         {"items", {{"type", "string"}, {"pattern", "^/"}, {"description", "a JSON pointer"}}}}},
       {"multiNode", schema::Boolean()},
       {"hostNetworkDnsPolicy",
        schema::Enum({"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"})}});
  kind["required"] = {"kind", "templates"};
  return kind;
}

Schema Dra() {
  Schema nic = schema::Object({{"driver", {{"type", "string"}, {"minLength", 1}}},
                               {"attribute", schema::String()},
                               {"path", schema::Enum({"dra", "plugin"})}});
  nic["required"] = {"driver"};
  return schema::Object(
      {{"nicDrivers", {{"type", "array"}, {"items", nic}}}, {"gpuDrivers", schema::Strings()}});
}

}  // namespace

nlohmann::ordered_json PolicySchema() {
  Schema policy = schema::Object(
      {{"apiVersion", {{"const", "rdma-webhook/v1"}}},
       {"kind", {{"const", "Policy"}}},
       {"gpuResources", schema::Strings()},
       {"resources", schema::Object({{"vf", schema::Strings()}, {"shared", schema::Strings()}})},
       {"rdmaNetworks", schema::Strings()},
       {"networkResourcesInjector", schema::Boolean()},
       {"dra", Dra()},
       {"kinds", {{"type", "array"}, {"items", Kind()}}},
       {"defaults", NamespaceEntry(false)},
       {"namespaces", {{"type", "array"}, {"items", NamespaceEntry(true)}}}});
  Schema out = {{"$schema", "http://json-schema.org/draft-07/schema#"},
                {"title", "rdma-webhook policy (apiVersion rdma-webhook/v1, kind Policy)"}};
  out.update(policy);
  return out;
}

}  // namespace rw::policy

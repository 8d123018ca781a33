// The table of output formats: every file of src/cli/formats/ is a format named by its file,
// listed by a unique position with the commands' default first; `check` and `audit` offer
// exactly these (the CLI tests assert each format's output).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "../../../src/cli/format.h"

namespace rw::cli {
namespace {

TEST(FormatTable, EveryFileOfTheFolderIsTheFormatItNames) {
  std::set<std::string> stems;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(RW_SOURCE_DIR) + "/src/cli/formats"))
    if (e.path().extension() == ".cc") stems.insert(e.path().stem().string());
  std::set<std::string> names;
  for (const Format* f : formats::FormatTable()) names.emplace(f->name);
  EXPECT_EQ(names, stems);
  EXPECT_EQ(names.size(), formats::FormatTable().size()) << "two files define the same name";
}

TEST(FormatTable, PositionsAreUniqueAndOrderTheFormatsWithTheDefaultFirst) {
  std::map<int, std::string_view> taken;
  for (const Format* f : Formats()) {
    const auto [it, fresh] = taken.emplace(f->position, f->name);
    EXPECT_TRUE(fresh) << f->name << " and " << it->second << " share position " << f->position;
  }
  for (std::size_t i = 1; i < Formats().size(); ++i)
    EXPECT_LT(Formats()[i - 1]->position, Formats()[i]->position);
  ASSERT_FALSE(Formats().empty());
  EXPECT_EQ(Formats().front()->name, "text");  // check's and audit's default, listed first
}

TEST(FormatTable, EveryFormatHasOneLineOfHelpAndCanBeOpened) {
  const std::string help = FormatsHelp();
  for (const Format* f : Formats()) {
    SCOPED_TRACE(std::string(f->name));
    EXPECT_FALSE(f->help.empty());
    EXPECT_EQ(f->help.find('\n'), std::string_view::npos);
    EXPECT_NE(help.find("\n  " + std::string(f->name) + " "), std::string::npos);
    EXPECT_NE(help.find(std::string(f->help)), std::string::npos);
    EXPECT_NE(f->open(ReportOptions{}), nullptr);
  }
}

TEST(FormatTable, AnUnknownNameIsABug) {
  EXPECT_EQ(FindFormat("sarif").name, "sarif");
  EXPECT_THROW(FindFormat("yaml"), std::logic_error);
}

}  // namespace
}  // namespace rw::cli

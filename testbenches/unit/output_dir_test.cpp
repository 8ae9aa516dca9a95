// OutputDir (models/sim/output_dir.h): a run's output folder is held by one run at a time, and its
// result files replace the previous set as a whole, or not at all.
#include "models/sim/output_dir.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using fabricsim::sim::is_result_file;
using fabricsim::sim::OutputDir;

namespace {

class OutputDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/output_dir_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    out_ = (root_ / "o").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  static std::string read(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  // Every entry of `dir`.
  static std::set<std::string> entries(const fs::path& dir) {
    std::set<std::string> s;
    for (const auto& e : fs::directory_iterator(dir)) s.insert(e.path().filename().string());
    return s;
  }

  fs::path root_;
  std::string out_;
};

TEST_F(OutputDirTest, NewFolderAppearsOnlyWhenPublished) {
  {
    OutputDir d(out_);
    write(fs::path(d.staging()) / "summary.json", "new");
    EXPECT_FALSE(fs::exists(out_));  // nothing in place before publish()
    EXPECT_FALSE(d.had_previous());
    d.publish();
  }
  EXPECT_EQ(read(fs::path(out_) / "summary.json"), "new");
  EXPECT_EQ(entries(root_), std::set<std::string>{"o"});  // no private folder, no lock left
}

TEST_F(OutputDirTest, PublishReplacesTheOldSetWholeAndKeepsOtherFiles) {
  fs::create_directory(out_);
  write(fs::path(out_) / "summary.json", "old");
  write(fs::path(out_) / "occupancy.csv", "old 16 ports");
  write(fs::path(out_) / "stdout.txt", "a sweep's");
  {
    OutputDir d(out_);
    EXPECT_TRUE(d.had_previous());
    write(fs::path(d.staging()) / "summary.json", "new");
    d.publish();
  }
  // The old occupancy.csv went with its set: the new set has no file of the old one.
  EXPECT_EQ(entries(out_), (std::set<std::string>{"stdout.txt", "summary.json"}));
  EXPECT_EQ(read(fs::path(out_) / "summary.json"), "new");
  EXPECT_EQ(read(fs::path(out_) / "stdout.txt"), "a sweep's");
  EXPECT_EQ(entries(root_), std::set<std::string>{"o"});
}

// The NICs' files are results too: a run without NICs into a folder that had them leaves none,
// and a file the new set writes always wins over an old one of the same name (it was once
// missing from the list, and the old fct.csv was carried over the new one).
TEST_F(OutputDirTest, NicResultsGoWithTheirSetAndTheNewSetWins) {
  fs::create_directory(out_);
  for (const char* n : {"fct.csv", "qp_rates.csv", "notes.txt"})
    write(fs::path(out_) / n, std::string("old ") + n);
  {
    OutputDir d(out_);
    write(fs::path(d.staging()) / "summary.json", "new");
    write(fs::path(d.staging()) / "notes.txt", "new notes");
    d.publish();
  }
  EXPECT_EQ(entries(out_), (std::set<std::string>{"notes.txt", "summary.json"}));
  EXPECT_EQ(read(fs::path(out_) / "notes.txt"), "new notes");
  {
    OutputDir d(out_);
    write(fs::path(d.staging()) / "fct.csv", "new fct");
    d.publish();
  }
  EXPECT_EQ(read(fs::path(out_) / "fct.csv"), "new fct");
}

TEST_F(OutputDirTest, UnpublishedRunLeavesTheOldSetAsItWas) {
  fs::create_directory(out_);
  write(fs::path(out_) / "summary.json", "old");
  {
    OutputDir d(out_);
    write(fs::path(d.staging()) / "summary.json", "half");
  }  // an error ended the run before publish()
  EXPECT_EQ(entries(out_), std::set<std::string>{"summary.json"});
  EXPECT_EQ(read(fs::path(out_) / "summary.json"), "old");
  EXPECT_EQ(entries(root_), std::set<std::string>{"o"});
}

TEST_F(OutputDirTest, SecondOwnerIsRefusedWithThePidOfTheFirst) {
  OutputDir first(out_);
  try {
    OutputDir second(out_);
    FAIL() << "a second owner of the folder was accepted";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("in use by another run"), std::string::npos) << m;
    EXPECT_NE(m.find("pid " + std::to_string(getpid())), std::string::npos) << m;
  }
  // The refusal did not disturb the owner: it still publishes.
  write(fs::path(first.staging()) / "summary.json", "first");
  first.publish();
  EXPECT_EQ(read(fs::path(out_) / "summary.json"), "first");
}

TEST_F(OutputDirTest, LockIsReleasedWhenTheRunEnds) {
  { OutputDir first(out_); }
  OutputDir again(out_);  // does not throw
  again.publish();
  EXPECT_TRUE(fs::is_directory(out_));
}

TEST_F(OutputDirTest, StaleFolderOfAKilledRunIsCleared) {
  fs::create_directory(root_ / ".o.new");
  write(root_ / ".o.new" / "summary.json", "killed");
  OutputDir d(out_);
  EXPECT_TRUE(fs::is_empty(d.staging()));
}

TEST_F(OutputDirTest, RefusesWhatIsNotAFolderOfItsOwn) {
  EXPECT_THROW(OutputDir(""), std::runtime_error);
  write(root_ / "file", "");
  EXPECT_THROW(OutputDir((root_ / "file").string()), std::runtime_error);
  EXPECT_THROW(OutputDir((root_ / "file" / "sub").string()), std::runtime_error);
  EXPECT_THROW(OutputDir("/"), std::runtime_error);
  const fs::path cwd = fs::current_path();
  fs::current_path(root_);
  EXPECT_THROW(OutputDir("."), std::runtime_error);
  EXPECT_THROW(OutputDir(".."), std::runtime_error);
  fs::current_path(cwd);
}

TEST(OutputDirNames, ResultFilesAreTheRunsOwn) {
  for (const char* n : {"summary.json", "perf.json", "ports.csv", "links.csv", "occupancy.csv",
                        "flow_events.csv", "fct.csv", "qp_rates.csv", "summary.json.part"})
    EXPECT_TRUE(is_result_file(n)) << n;
  for (const char* n : {"stdout.txt", "command.txt", "plots", "summary.json.bak", ".part"})
    EXPECT_FALSE(is_result_file(n)) << n;
}

}  // namespace

#include "models/common/cpu_budget.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fabricsim {
namespace {

namespace fs = std::filesystem;

TEST(CpuBudget, CgroupV2CpuMax) {
  EXPECT_EQ(parse_cpu_max("max 100000\n"), std::nullopt);
  EXPECT_DOUBLE_EQ(*parse_cpu_max("150000 100000\n"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_cpu_max("50000 100000"), 0.5);
  EXPECT_EQ(parse_cpu_max(""), std::nullopt);
  EXPECT_EQ(parse_cpu_max("100000"), std::nullopt);
  EXPECT_EQ(parse_cpu_max("100000 0"), std::nullopt);
  EXPECT_EQ(parse_cpu_max("1e5 100000"), std::nullopt);
}

TEST(CpuBudget, CgroupV1CfsQuota) {
  EXPECT_EQ(parse_cfs_quota("-1\n", "100000\n"), std::nullopt);
  EXPECT_DOUBLE_EQ(*parse_cfs_quota("200000\n", "100000\n"), 2.0);
  EXPECT_DOUBLE_EQ(*parse_cfs_quota("25000", "50000"), 0.5);
  EXPECT_EQ(parse_cfs_quota("x", "100000"), std::nullopt);
}

class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("fabricsim_cgroup_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string root() const { return root_.string(); }
  fs::path root_;
};

TEST_F(CgroupTree, V2TakesTheTightestQuotaOnThePathToTheRoot) {
  put("cpu.max", "max 100000\n");
  put("user.slice/cpu.max", "300000 100000\n");
  put("user.slice/job/cpu.max", "max 100000\n");
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota(root(), "0::/user.slice/job\n"), 3.0);
  put("user.slice/job/cpu.max", "120000 100000\n");
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota(root(), "0::/user.slice/job\n"), 1.2);
}

TEST_F(CgroupTree, V2WithoutQuotaOrFilesIsNone) {
  EXPECT_EQ(cgroup_cpu_quota(root(), "0::/nowhere\n"), std::nullopt);
  put("cpu.max", "max 100000\n");
  EXPECT_EQ(cgroup_cpu_quota(root(), "0::/\n"), std::nullopt);
}

TEST_F(CgroupTree, V1ReadsTheCpuController) {
  put("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "100000\n");
  put("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  put("memory/docker/abc/cpu.cfs_quota_us", "1\n");  // another controller's tree: not read
  put("memory/docker/abc/cpu.cfs_period_us", "100000\n");
  const std::string cg = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n";
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota(root(), cg), 1.0);
}

TEST_F(CgroupTree, V1UnlimitedIsNone) {
  put("cpu/cpu.cfs_quota_us", "-1\n");
  put("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroup_cpu_quota(root(), "1:cpu:/\n"), std::nullopt);
}

}  // namespace
}  // namespace fabricsim

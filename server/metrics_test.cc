#include "server/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "prometheus/registry.h"

namespace pto::server {
namespace {

std::string Scrape(Metrics& metrics) {
  return prometheus::TextSerializer().Serialize(metrics.registry().Collect());
}

TEST(MetricsTest, BucketsSpanOneMillisecondToTenThousandSecondsInX25Steps) {
  const std::vector<double> b = DurationBuckets();
  ASSERT_GE(b.size(), 15u);
  EXPECT_DOUBLE_EQ(b.front(), 1e-3);
  EXPECT_DOUBLE_EQ(b.back(), 1e4);
  for (size_t i = 1; i < b.size(); ++i) {
    const double ratio = b[i] / b[i - 1];
    EXPECT_GT(ratio, 1.5) << i;
    EXPECT_LT(ratio, 2.6) << i;
  }
}

TEST(MetricsTest, CountersAndHistogramsShowUpInTheExposition) {
  Metrics metrics;
  metrics.RecordRequest(RequestResult::kHit);
  metrics.RecordRequest(RequestResult::kHit);
  metrics.RecordRequest(RequestResult::kMiss);
  metrics.RecordRequest(RequestResult::kError);
  metrics.ObserveCompile(0.5);
  metrics.ObserveStage("native_compile", 0.4);
  metrics.CompileStarted();
  metrics.SetCacheContents(3, 4096);
  metrics.SetCorruptEntries(2);
  metrics.SetCorruptEntries(2);  // mirrors a total: no double count
  metrics.AddSecondsSaved(1.5);
  const std::string text = Scrape(metrics);
  EXPECT_NE(text.find("pto_requests_total{result=\"hit\",tenant=\"\"} 2"),
            std::string::npos) << text;
  EXPECT_NE(text.find("pto_requests_total{result=\"miss\",tenant=\"\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("pto_requests_total{result=\"coalesced\",tenant=\"\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("pto_requests_total{result=\"error\",tenant=\"\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("pto_compile_duration_seconds_count 1"),
            std::string::npos);
  EXPECT_NE(text.find("pto_compile_duration_seconds_bucket{le=\"0.001\"} 0"),
            std::string::npos) << text;
  EXPECT_NE(text.find("pto_compile_stage_duration_seconds_count{stage="
                      "\"native_compile\"} 1"),
            std::string::npos) << text;
  EXPECT_NE(text.find("pto_compiles_in_flight 1"), std::string::npos);
  EXPECT_NE(text.find("pto_cache_entries 3"), std::string::npos);
  EXPECT_NE(text.find("pto_cache_bytes 4096"), std::string::npos);
  EXPECT_NE(text.find("pto_cache_corrupt_entries_total 2"), std::string::npos);
  EXPECT_NE(text.find("pto_compile_seconds_saved_total 1.5"),
            std::string::npos);
}

TEST(MetricsTest, ServeOnPortZeroPicksAPortAndABadAddressFailsClearly) {
  Metrics metrics;
  absl::StatusOr<int> port = metrics.Serve("127.0.0.1:0");
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_GT(*port, 0);
  EXPECT_FALSE(metrics.Serve("127.0.0.1:0").ok());  // once only

  Metrics other;
  absl::StatusOr<int> taken =
      other.Serve(absl::StrCat("127.0.0.1:", *port));
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find(absl::StrCat(*port)),
            std::string::npos)
      << taken.status();
}

TEST(MetricsTest, TierHitsAreCountedPerTier) {
  Metrics metrics;
  metrics.RecordTierHit("memory");
  metrics.RecordTierHit("memory");
  metrics.RecordTierHit("redis");
  const std::string text = Scrape(metrics);
  EXPECT_NE(text.find("pto_cache_tier_hits_total{tier=\"memory\"} 2"),
            std::string::npos) << text;
  EXPECT_NE(text.find("pto_cache_tier_hits_total{tier=\"rocksdb\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("pto_cache_tier_hits_total{tier=\"redis\"} 1"),
            std::string::npos);
}

TEST(MetricsTest, RequestsAndCompilesAreLabelledByTarget) {
  Metrics metrics;
  metrics.RecordTargetRequest("ascend-a2a3", RequestResult::kMiss);
  metrics.RecordTargetRequest("ascend-a2a3", RequestResult::kHit);
  metrics.RecordTargetRequest("ascend-a2a3", RequestResult::kHit);
  metrics.RecordTargetRequest("host-x86_64-v3", RequestResult::kCoalesced);
  metrics.ObserveTargetCompile("ascend-a2a3", 2.0);
  const std::string text = Scrape(metrics);
  EXPECT_NE(text.find("pto_target_requests_total{result=\"hit\",target=\"ascend-a2a3\"} 2"),
            std::string::npos) << text;
  EXPECT_NE(text.find("pto_target_requests_total{result=\"miss\",target=\"ascend-a2a3\"} 1"),
            std::string::npos) << text;
  EXPECT_NE(
      text.find("pto_target_requests_total{result=\"coalesced\",target=\"host-x86_64-v3\"} 1"),
      std::string::npos) << text;
  EXPECT_NE(text.find("pto_target_compile_duration_seconds_count{target=\"ascend-a2a3\"} 1"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("pto_target_compile_duration_seconds_count{target=\"host-x86_64-v3\"}"),
            std::string::npos) << text;
}

TEST(MetricsTest, RedisSeriesExistOnlyOnceTheTierIsEnabled) {
  Metrics metrics;
  metrics.RecordRedisOperation("get", "hit", 0.001);  // ignored: not enabled
  EXPECT_EQ(Scrape(metrics).find("pto_redis_"), std::string::npos);
  metrics.EnableRedisTier();
  metrics.RecordRedisOperation("get", "hit", 0.001);
  metrics.RecordRedisOperation("get", "corrupt", 0.002);
  metrics.RecordRedisOperation("set", "dropped", 0);
  metrics.RecordRedisCorruptEntry();
  metrics.RecordRedisLease("waited");
  metrics.SetRedisUp(false);
  const std::string text = Scrape(metrics);
  EXPECT_NE(text.find("pto_redis_operations_total{op=\"get\",result=\"hit\"} 1"),
            std::string::npos) << text;
  EXPECT_NE(text.find("pto_redis_operations_total{op=\"get\",result=\"miss\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("pto_redis_operations_total{op=\"set\",result=\"dropped\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("pto_redis_operation_duration_seconds_count{op=\"get\"} 2"),
            std::string::npos);
  // A dropped write took no Redis time: not observed.
  EXPECT_NE(text.find("pto_redis_operation_duration_seconds_count{op=\"set\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("pto_redis_corrupt_entries_total 1"), std::string::npos);
  EXPECT_NE(text.find("pto_redis_leases_total{result=\"waited\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("pto_redis_up 0"), std::string::npos);
}

}  // namespace
}  // namespace pto::server

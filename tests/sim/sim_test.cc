// vigil-sim, driven as a process on free loopback ports: its pages parse
// and look like the real captures, they are a pure function of (seed,
// config, faults, t), faults move the right metrics, bad control requests
// are refused, and the backfill imports into Vigil and fires the alerts.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::Process;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::TempDir;

constexpr int64_t kSimStart = 1767268800;  // 2026-01-01 12:00 UTC
constexpr int64_t kNow = kSimStart + 3600;

struct Target {
  std::string addr, job, variant;
};

// A running vigil-sim with its file_sd targets and control address.
class Sim {
 public:
  explicit Sim(const std::string& flags) {
    std::string sd = dir_.Sub("sd.json"), log = dir_.Sub("log");
    std::vector<std::string> argv = {VIGIL_SIM_BINARY, "--listen=127.0.0.1:0",
                                     "--sd-file=" + sd};
    std::istringstream in(flags);
    for (std::string f; in >> f;) argv.push_back(f);
    proc_ = std::make_unique<Process>(argv, log);
    // A backfill runs first; on a loaded 2-core machine it takes seconds.
    for (int i = 0; i < 1200 && control_.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::smatch m;
      std::string text = ReadFile(log);
      if (std::regex_search(text, m, std::regex("control on ([0-9.:]+)"))) {
        control_ = m[1];
      }
    }
    std::string json = ReadFile(sd);
    std::regex group(R"re(\{"targets":\["([^"]+)"\],"labels":\{([^}]*)\}\})re");
    for (auto it = std::sregex_iterator(json.begin(), json.end(), group);
         it != std::sregex_iterator(); ++it) {
      std::string labels = (*it)[2];
      std::smatch m;
      Target t{(*it)[1], "", ""};
      if (std::regex_search(labels, m, std::regex(R"re("job":"([^"]+)")re"))) {
        t.job = m[1];
      }
      if (std::regex_search(labels, m,
                            std::regex(R"re("variant":"([^"]+)")re"))) {
        t.variant = m[1];
      }
      targets_.push_back(t);
    }
  }
  ~Sim() {
    proc_->Signal(SIGTERM);
    if (proc_->Wait(3000) < 0) proc_->Signal(SIGKILL);
  }
  const std::string& control() const { return control_; }
  const std::vector<Target>& targets() const { return targets_; }
  std::string Sub(const std::string& n) const { return dir_.Sub(n); }
  const Target& Find(const std::string& job, int nth = 0) const {
    for (const auto& t : targets_) {
      if (t.job == job && nth-- == 0) return t;
    }
    FAIL("no target of job " << job);
    return targets_[0];
  }

 private:
  TempDir dir_;
  std::unique_ptr<Process> proc_;
  std::string control_;
  std::vector<Target> targets_;
};

struct Reply {
  int curl = -1;  // curl's exit code: 0 ok, 7 refused, 28 timeout
  int status = 0;
  std::string body;
};

Reply Http(const std::string& method, const std::string& url,
           const std::string& body = "", int timeout_s = 5) {
  static int n = 0;
  std::string out = "/tmp/vigil-sim-test-" + std::to_string(getpid()) + "-" +
                    std::to_string(n++);
  std::string cmd = "curl -s -o '" + out + "' -w '%{http_code}' --max-time " +
                    std::to_string(timeout_s) + " -X " + method;
  if (!body.empty()) {
    std::ofstream(out + ".in") << body;
    cmd += " --data-binary @'" + out + ".in'";
  }
  auto r = Run(cmd + " '" + url + "'");
  Reply rep{r.code, std::atoi(r.out.c_str()), ReadFile(out)};
  std::remove(out.c_str());
  std::remove((out + ".in").c_str());
  return rep;
}

Reply Get(const std::string& url, int timeout_s = 5) {
  return Http("GET", url, "", timeout_s);
}

// `vigil check metrics` on a page: 0 clean, 3 lint only, 1 parse error.
vigil::testutil::RunResult CheckMetrics(const std::string& page) {
  static int n = 0;
  std::string f = "/tmp/vigil-sim-check-" + std::to_string(getpid()) + "-" +
                  std::to_string(n++);
  std::ofstream(f) << page;
  auto r =
      Run(std::string("'") + VIGIL_BINARY + "' check metrics < '" + f + "'");
  std::remove(f.c_str());
  return r;
}

// Family name -> type, and family name -> label names of its samples.
struct Shape {
  std::map<std::string, std::string> types;
  std::map<std::string, std::set<std::string>> labels;
};

Shape ShapeOf(const std::string& page) {
  Shape s;
  std::istringstream in(page);
  std::string line, family;
  std::regex type_re(R"(^# TYPE (\S+) (\S+))");
  std::regex label_re(R"re(([A-Za-z_][A-Za-z0-9_]*)=")re");
  for (std::smatch m; std::getline(in, line);) {
    if (std::regex_search(line, m, type_re)) {
      s.types[m[1]] = m[2];
      family = m[1];
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    // Samples belong to the family declared last (histogram suffixes).
    std::string fam = name.rfind(family, 0) == 0 ? family : name;
    size_t open = line.find('{'), close = line.rfind('}');
    if (open == std::string::npos) {
      s.labels[fam];
      continue;
    }
    std::string ls = line.substr(open, close - open);
    for (auto it = std::sregex_iterator(ls.begin(), ls.end(), label_re);
         it != std::sregex_iterator(); ++it) {
      std::string l = (*it)[1];
      if (l != "le") s.labels[fam].insert(l);
    }
  }
  return s;
}

// Value of the first sample whose line starts with `prefix`.
double Value(const std::string& page, const std::string& prefix) {
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) {
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  FAIL("no sample " << prefix);
  return 0;
}

bool Has(const std::string& page, const std::string& needle) {
  return page.find(needle) != std::string::npos;
}

std::string Shared(const std::string& f) {
  return ReadFile(std::string(VIGIL_SHARED_DIR) + "/fixtures/metrics/" + f);
}

std::string Fixed() {
  return "--start=" + std::to_string(kSimStart) +
         " --fixed-time=" + std::to_string(kNow);
}

}  // namespace

TEST_CASE("every page parses and matches its real capture", "[sim][shared]") {
  Sim sim("--hosts=3 --engines=vllm-v1,sglang,vllm-v0 --trtllm-hosts=1 --ecc " +
          Fixed());
  REQUIRE(!sim.control().empty());
  REQUIRE(sim.targets().size() == 1 + 4 * 3);
  // Names the captures lack that the catalog documents (CATALOG.md 1.2,
  // 1.1, 2, 4): speculative decoding, ECC, throttle reasons, network
  // devices of node-exporter's capture have no samples.
  const std::map<std::string, std::string> documented = {
      {"vllm:spec_decode_num_drafts_total", "counter"},
      {"vllm:spec_decode_num_drafts_created", "gauge"},
      {"vllm:spec_decode_num_draft_tokens_total", "counter"},
      {"vllm:spec_decode_num_draft_tokens_created", "gauge"},
      {"vllm:spec_decode_num_accepted_tokens_total", "counter"},
      {"vllm:spec_decode_num_accepted_tokens_created", "gauge"},
      {"vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter"},
      {"vllm:spec_decode_num_accepted_tokens_per_pos_created", "gauge"},
      {"vllm:spec_decode_draft_acceptance_rate", "gauge"},
      {"vllm:spec_decode_efficiency", "gauge"},
      {"vllm:spec_decode_num_emitted_tokens_total", "counter"},
      {"sglang:spec_accept_length", "gauge"},
      {"sglang:spec_accept_rate", "gauge"},
      {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge"},
      {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter"},
      {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter"},
      {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter"},
      {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter"},
  };
  const std::map<std::string, std::pair<std::string, std::vector<std::string>>>
      captures = {
          {"vllm-v1",
           {"vllm-v1.txt",
            {"vllm:num_requests_running", "vllm:num_requests_waiting",
             "vllm:kv_cache_usage_perc", "vllm:prompt_tokens_total",
             "vllm:generation_tokens_total", "vllm:num_preemptions_total",
             "vllm:time_to_first_token_seconds",
             "vllm:inter_token_latency_seconds",
             "vllm:e2e_request_latency_seconds", "vllm:prefix_cache_hits_total",
             "vllm:prompt_tokens_created"}}},
          {"vllm-v0",
           {"vllm-v0.txt",
            {"vllm:gpu_cache_usage_perc", "vllm:num_requests_waiting",
             "vllm:time_per_output_token_seconds",
             "vllm:time_to_first_token_seconds", "vllm:prompt_tokens_total",
             "vllm:generation_tokens_total"}}},
          {"sglang",
           {"sglang.txt",
            {"sglang:num_running_reqs", "sglang:num_queue_reqs",
             "sglang:token_usage", "sglang:cache_hit_rate",
             "sglang:time_to_first_token_seconds",
             "sglang:time_per_output_token_seconds",
             "sglang:generation_tokens_total"}}},
          {"dcgm-exporter",
           {"dcgm-exporter-rtx4000ada-lke.txt",
            {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED",
             "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
             "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_SM_CLOCK",
             "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}}},
          {"node-exporter",
           {"node-exporter-e2e.txt",
            {"node_cpu_seconds_total", "node_load1",
             "node_memory_MemTotal_bytes",
             "node_network_receive_bytes_total"}}},
          {"gateway",
           {"ingress-nginx.txt",
            {"nginx_ingress_controller_requests",
             "nginx_ingress_controller_request_duration_seconds",
             "nginx_ingress_controller_response_duration_seconds"}}},
      };
  std::set<std::string> seen;
  for (const auto& t : sim.targets()) {
    Reply r = Get("http://" + t.addr + "/metrics");
    if (t.job == "trtllm") {
      CHECK(r.status == 404);  // trtllm-serve has no Prometheus /metrics
      continue;
    }
    REQUIRE(r.status == 200);
    std::string key = t.job == "vllm" || t.job == "sglang" ? t.variant : t.job;
    INFO(t.addr << " " << key);
    seen.insert(key);
    auto check = CheckMetrics(r.body);
    // 3: the same lint the real exporters get (':' in names, camelCase).
    CHECK((check.code == 0 || check.code == 3));
    CHECK(check.out.find("error") == std::string::npos);
    const auto& [file, important] = captures.at(key);
    Shape real = ShapeOf(Shared(file)), got = ShapeOf(r.body);
    for (const auto& [name, type] : got.types) {
      INFO(name);
      if (documented.count(name)) {
        CHECK(documented.at(name) == type);
        continue;
      }
      REQUIRE(real.types.count(name));
      CHECK(real.types.at(name) == type);
      if (real.labels.count(name) && got.labels.count(name)) {
        for (const auto& l : got.labels.at(name)) {
          INFO("label " << l);
          CHECK(real.labels.at(name).count(l));
        }
      }
    }
    for (const auto& name : important) {
      INFO(name);
      CHECK(got.types.count(name));
    }
  }
  CHECK(seen.size() == captures.size());
}

TEST_CASE("a page is a pure function of seed, config and time", "[sim]") {
  Sim a("--hosts=2 --engines=vllm-v1,sglang --seed=7 " + Fixed());
  Sim b("--hosts=2 --engines=vllm-v1,sglang --seed=7 " + Fixed());
  Sim c("--hosts=2 --engines=vllm-v1,sglang --seed=8 " + Fixed());
  REQUIRE(a.targets().size() == b.targets().size());
  std::string t = std::to_string(kNow - 600);
  for (size_t i = 0; i < a.targets().size(); ++i) {
    std::string q = "/metrics?t=" + t;
    Reply ra = Get("http://" + a.targets()[i].addr + q);
    Reply rb = Get("http://" + b.targets()[i].addr + q);
    REQUIRE(ra.status == 200);
    CHECK(ra.body == rb.body);
    // The past, asked after the present, is the same as asked first.
    Get("http://" + a.targets()[i].addr + "/metrics");
    CHECK(Get("http://" + a.targets()[i].addr + q).body == ra.body);
    if (a.targets()[i].job == "vllm") {
      CHECK(Get("http://" + c.targets()[i].addr + q).body != ra.body);
    }
  }
  // Counters only go up.
  const Target& v = a.Find("vllm");
  double before = Value(Get("http://" + v.addr + "/metrics?t=" + t).body,
                        "vllm:generation_tokens_total{");
  double after = Value(Get("http://" + v.addr + "/metrics").body,
                       "vllm:generation_tokens_total{");
  CHECK(before > 0);
  CHECK(after > before);
}

TEST_CASE("faults from the control API move the right metrics", "[sim]") {
  Sim sim("--hosts=2 --ecc " + Fixed());
  std::string ctl = "http://" + sim.control();
  const Target& dcgm0 = sim.Find("dcgm-exporter", 0);
  const Target& vllm1 = sim.Find("vllm", 1);
  const Target& vllm0 = sim.Find("vllm", 0);

  SECTION("XID: the gauge holds the code, err_code names it") {
    Reply r = Http("POST", ctl + "/control/fault",
                   R"({"kind":"xid","host":0,"gpu":3,"code":79})");
    REQUIRE(r.status == 201);
    std::string page = Get("http://" + dcgm0.addr + "/metrics").body;
    CHECK(Has(page, "gpu=\"3\""));
    std::smatch m;
    REQUIRE(std::regex_search(
        page, m,
        std::regex(
            R"(DCGM_FI_DEV_XID_ERRORS\{gpu="3"[^}]*err_code="79"[^}]*\} 79)")));
    CHECK(std::regex_search(
        page, std::regex(R"(DCGM_FI_DEV_XID_ERRORS\{gpu="2"[^}]*\} 0)")));
    // GPU fallen off the bus: the engine fails its requests, the gateway
    // counts 500s.
    std::string later = "?t=" + std::to_string(kNow + 120);
    CHECK(Value(Get("http://" + vllm0.addr + "/metrics" + later).body,
                "vllm:request_success_total{engine=\"0\",finished_reason="
                "\"error\"") > 10);
    CHECK(
        Has(Get("http://" + sim.Find("gateway").addr + "/metrics" + later).body,
            "status=\"500\""));
  }
  SECTION("KV-cache saturation: usage near 1, preemptions, queue") {
    REQUIRE(Http("POST", ctl + "/control/fault",
                 R"({"kind":"kv-saturation","host":1,"duration":"30m"})")
                .status == 201);
    std::string page =
        Get("http://" + vllm1.addr + "/metrics?t=" + std::to_string(kNow + 300))
            .body;
    CHECK(Value(page, "vllm:kv_cache_usage_perc{") > 0.97);
    CHECK(Value(page, "vllm:num_preemptions_total{") > 10);
    std::string healthy = Get("http://" + vllm0.addr + "/metrics").body;
    CHECK(Value(healthy, "vllm:kv_cache_usage_perc{") < 0.9);
  }
  SECTION("engine hang: inference times out, /metrics still answers") {
    const std::string ask = R"({"model":"m","prompt":"ping","max_tokens":1})";
    Reply before =
        Http("POST", "http://" + vllm1.addr + "/v1/completions", ask);
    CHECK(before.status == 200);
    CHECK(Has(before.body, "\"choices\""));
    CHECK(Has(Http("POST", "http://" + vllm1.addr + "/v1/chat/completions",
                   R"({"messages":[{"role":"user","content":"ping"}]})")
                  .body,
              "\"message\""));
    CHECK(Get("http://" + vllm1.addr + "/v1/completions").status == 405);
    REQUIRE(Http("POST", ctl + "/control/fault",
                 R"({"kind":"engine-hang","host":1})")
                .status == 201);
    Reply hung =
        Http("POST", "http://" + vllm1.addr + "/v1/completions", ask, 1);
    CHECK(hung.curl == 28);
    // The process is alive: its metrics page answers, so `up` stays 1.
    CHECK(Get("http://" + vllm1.addr + "/metrics").status == 200);
    CHECK(
        Http("POST", "http://" + vllm0.addr + "/v1/completions", ask).status ==
        200);
    CHECK(Get("http://" + sim.Find("dcgm-exporter", 1).addr + "/metrics")
              .status == 200);
    CHECK(Get("http://" + vllm0.addr + "/metrics").status == 200);
    CHECK(Has(Get("http://" + sim.Find("gateway").addr +
                  "/metrics?t=" + std::to_string(kNow + 60))
                  .body,
              "status=\"504\""));
    // Cleared: it answers again.
    REQUIRE(Http("POST", ctl + "/control/clear").status == 200);
    CHECK(
        Http("POST", "http://" + vllm1.addr + "/v1/completions", ask).status ==
        200);
  }
  SECTION("target down: refused, or 404") {
    REQUIRE(Http("POST", ctl + "/control/fault",
                 R"({"kind":"target-down","host":0,"page":"node"})")
                .status == 201);
    REQUIRE(
        Http("POST", ctl + "/control/fault",
             R"({"kind":"target-down","host":1,"page":"engine","mode":"404"})")
            .status == 201);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    CHECK(
        Get("http://" + sim.Find("node-exporter", 0).addr + "/metrics").curl ==
        7);
    CHECK(Get("http://" + vllm1.addr + "/metrics").status == 404);
    Reply list = Get(ctl + "/control/faults");
    CHECK(Has(list.body, "\"kind\":\"target-down\""));
    CHECK(Has(list.body, "\"state\":\"active\""));
    REQUIRE(Http("DELETE", ctl + "/control/fault/1").status == 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    CHECK(Get("http://" + sim.Find("node-exporter", 0).addr + "/metrics")
              .status == 200);
  }
  SECTION("overheating GPU throttles: temperature, clock, bitmask") {
    REQUIRE(Http("POST", ctl + "/control/fault",
                 R"({"kind":"gpu-overheat","host":0,"gpu":1,"temp":95})")
                .status == 201);
    std::string page = Get("http://" + dcgm0.addr +
                           "/metrics?t=" + std::to_string(kNow + 1200))
                           .body;
    CHECK(Value(page, "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\"") > 90);
    CHECK(Value(page, "DCGM_FI_DEV_SM_CLOCK{gpu=\"1\"") < 1700);
    int bits = int(Value(page, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"1\""));
    CHECK((bits & 0x40) != 0);
    CHECK(Value(page, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"") < 85);
  }
  SECTION("ECC double-bit errors step the DBE counters") {
    REQUIRE(Http("POST", ctl + "/control/fault",
                 R"({"kind":"ecc-dbe","host":0,"gpu":2,"count":2})")
                .status == 201);
    std::string page =
        Get("http://" + dcgm0.addr + "/metrics?t=" + std::to_string(kNow + 30))
            .body;
    CHECK(Value(page, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"2\"") == 2);
    CHECK(Value(page, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL{gpu=\"2\"") == 2);
    CHECK(Value(page, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL{gpu=\"1\"") == 0);
  }
  SECTION("gateway 5xx and low speculative acceptance") {
    REQUIRE(Http("POST", ctl + "/control/fault",
                 R"({"kind":"gateway-5xx","fraction":0.2})")
                .status == 201);
    REQUIRE(Http("POST", ctl + "/control/fault",
                 R"({"kind":"spec-decode-low","host":0,"rate":0.1})")
                .status == 201);
    std::string later = "?t=" + std::to_string(kNow + 600);
    CHECK(
        Has(Get("http://" + sim.Find("gateway").addr + "/metrics" + later).body,
            "status=\"503\""));
    std::string before =
        Get("http://" + vllm0.addr + "/metrics?t=" + std::to_string(kNow)).body;
    std::string after = Get("http://" + vllm0.addr + "/metrics" + later).body;
    auto accepted = [](const std::string& p) {
      return Value(p, "vllm:spec_decode_num_accepted_tokens_total{");
    };
    auto drafts = [](const std::string& p) {
      return Value(p, "vllm:spec_decode_num_draft_tokens_total{");
    };
    double rate =
        (accepted(after) - accepted(before)) / (drafts(after) - drafts(before));
    CHECK(rate < 0.2);
    CHECK(accepted(before) / drafts(before) > 0.5);
  }
}

TEST_CASE("malformed control requests get a 400 that names the problem",
          "[sim]") {
  Sim sim("--hosts=2 " + Fixed());
  std::string url = "http://" + sim.control() + "/control/fault";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "body"},
      {"[1,2]", "fault"},
      {R"({"host":0})", "kind: missing"},
      {R"({"kind":"meltdown"})", "unknown fault kind"},
      {R"({"kind":"xid","host":9})", "host: 9 out of range"},
      {R"({"kind":"xid","host":0,"gpu":8})", "gpu: 8 out of range"},
      {R"({"kind":"xid","hots":0})", "hots: unknown field"},
      {R"({"kind":"xid","host":0,"duration":"5x"})", "duration"},
      {R"({"kind":"xid"})", "host: missing"},
      {R"({"kind":"gateway-5xx","fraction":2})", "fraction"},
      {R"({"kind":"ecc-dbe","host":0})", "--ecc"},
      {R"({"kind":"target-down","host":0,"page":"disk"})", "page"},
  };
  for (const auto& [body, want] : cases) {
    INFO(body);
    Reply r = Http("POST", url, body);
    CHECK(r.status == 400);
    CHECK(Has(r.body, want));
  }
  CHECK(Http("DELETE", url + "/77").status == 404);
  CHECK(Http("DELETE", url + "/x").status == 400);
  CHECK(Get("http://" + sim.control() + "/control/faults")
            .body.find("\"faults\":[]") != std::string::npos);
}

TEST_CASE("backfill imports into vigil and continues into the live pages",
          "[sim]") {
  TempDir dir;
  std::string om = dir.Sub("history.om"), scenario = dir.Sub("scenario.yml");
  std::ofstream(scenario)
      << "faults:\n"
         "  - {at: 10m, kind: kv-saturation, host: 0}\n"
         "  - {at: 20m, kind: xid, host: 1, gpu: 5, code: 48}\n";
  int64_t end = kSimStart + 1800;
  Sim sim(
      "--hosts=2 --engines=vllm-v1,sglang --backfill=30m --live "
      "--backfill-file=" +
      om + " --scenario=" + scenario + " --start=" + std::to_string(kSimStart) +
      " --fixed-time=" + std::to_string(end));
  REQUIRE(!sim.control().empty());
  std::string text = ReadFile(om);
  REQUIRE(text.size() > 1000);
  CHECK(text.substr(text.size() - 6) == "# EOF\n");
  auto r = Run(std::string("'") + VIGIL_BINARY + "' tsdb import openmetrics '" +
               om + "' '" + dir.Sub("db") + "'");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  // The last backfilled counter equals the live page at that second.
  const Target& v = sim.Find("vllm");
  // Line by line: one std::regex over the whole history took most of a
  // minute under ASan.
  std::string last_value;
  const std::string stamp = " " + std::to_string(end);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("vllm:generation_tokens_total{", 0) != 0 ||
        !Has(line, "instance=\"" + v.addr + "\"") ||
        line.size() < stamp.size() ||
        line.compare(line.size() - stamp.size(), stamp.size(), stamp) != 0)
      continue;
    const size_t brace = line.rfind("} ");
    REQUIRE(brace != std::string::npos);
    last_value = line.substr(brace + 2, line.size() - stamp.size() - brace - 2);
  }
  REQUIRE(!last_value.empty());
  double live = Value(Get("http://" + v.addr + "/metrics").body,
                      "vllm:generation_tokens_total{");
  CHECK(std::stod(last_value) == live);
  // The rule pack's alerts fire on the history.
  std::string rules = std::string(VIGIL_SOURCE_DIR) + "/examples/llm/rules/";
  auto replay = Run(std::string("'") + VIGIL_BINARY +
                    "' rules replay --storage.tsdb.path='" + dir.Sub("db") +
                    "' --start=" + std::to_string(kSimStart) +
                    " --end=" + std::to_string(end) + " --eval-interval=15s '" +
                    rules + "recording.yml' '" + rules + "alerts.yml'");
  INFO(replay.out << replay.err);
  REQUIRE(replay.code == 0);
  CHECK(Has(replay.out, "KVCacheCritical"));
  CHECK(Has(replay.out, "XidError"));
}

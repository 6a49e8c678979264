// examples/llm/grafana/llm-inference.json, the dashboard of the LLM rule
// pack: it imports into Grafana 10/11 (the fields the import needs), every
// query parses with Vigil's PromQL parser once the variables are replaced as
// Grafana's Prometheus data source replaces them, every llm:* name is one
// rules/recording.yml records, every raw metric is one the exporters (or
// Vigil itself) emit, and the threshold bands sit at the alert thresholds of
// rules/alerts.yml.
//
// And live ([live_sim]): Vigil scraping a small vigil-sim fleet every second
// with the rule pack, every query of the dashboard (panels, annotations,
// template variables; variables at All) returns data as an instant and as a
// range query, faults injected through the simulator's control endpoint for
// the panels that only have data during one (FaultFed). The same check
// against any running server: VIGIL_DASHBOARD_LIVE_URL=http://host:port and
// the hidden [.live] test.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "promql/ast.h"
#include "promql/parser.h"
#include "rules/rule_file.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

namespace fs = std::filesystem;
using vigil::testutil::HaveCommand;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::ShellQuote;

const std::string kLlmDir = std::string(VIGIL_SOURCE_DIR) + "/examples/llm";
const std::string kDashboard = kLlmDir + "/grafana/llm-inference.json";
const std::string kShared = VIGIL_SHARED_DIR;

// One query of the dashboard, as written.
struct DashboardQuery {
  std::string where;  // "panel 9 \"TTFT p95 / p99\" A", "variable instance"
  std::string text;
  bool is_variable = false;        // a template-variable query, not PromQL
  std::vector<double> thresholds;  // the panel's threshold steps
  std::string panel_title;
};

// A template variable and what the dashboard user picked.
struct Variable {
  bool multi = false;
  bool include_all = false;
  std::string all_value;  // "" = Grafana's default (all values joined)
};

// What the user selected: a list of values, or All when empty.
using Selection = std::map<std::string, std::vector<std::string>>;

std::string Str(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject() || !v.HasMember(key) || !v[key].IsString()) return "";
  return v[key].GetString();
}

rapidjson::Document LoadDashboard() {
  rapidjson::Document d;
  d.Parse(ReadFile(kDashboard).c_str());
  INFO(kDashboard);
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsObject());
  return d;
}

std::vector<double> PanelThresholds(const rapidjson::Value& panel) {
  std::vector<double> out;
  if (!panel.HasMember("fieldConfig")) return out;
  const auto& fc = panel["fieldConfig"];
  if (!fc.HasMember("defaults") || !fc["defaults"].HasMember("thresholds"))
    return out;
  const auto& th = fc["defaults"]["thresholds"];
  if (!th.HasMember("steps")) return out;
  for (const auto& s : th["steps"].GetArray()) {
    if (s.HasMember("value") && s["value"].IsNumber())
      out.push_back(s["value"].GetDouble());
  }
  return out;
}

// Every panel, with the panels of collapsed rows.
void Panels(const rapidjson::Value& list,
            std::vector<const rapidjson::Value*>* out) {
  for (const auto& p : list.GetArray()) {
    out->push_back(&p);
    if (p.HasMember("panels") && p["panels"].IsArray())
      Panels(p["panels"], out);
  }
}

std::vector<DashboardQuery> Queries(const rapidjson::Document& d) {
  std::vector<DashboardQuery> out;
  std::vector<const rapidjson::Value*> panels;
  Panels(d["panels"], &panels);
  for (const auto* p : panels) {
    if (!p->HasMember("targets")) continue;
    for (const auto& t : (*p)["targets"].GetArray()) {
      DashboardQuery q;
      q.panel_title = Str(*p, "title");
      q.where = "panel " + std::to_string((*p)["id"].GetInt()) + " \"" +
                q.panel_title + "\" " + Str(t, "refId");
      q.text = Str(t, "expr");
      q.thresholds = PanelThresholds(*p);
      out.push_back(q);
    }
  }
  for (const auto& a : d["annotations"]["list"].GetArray()) {
    if (a.HasMember("expr")) {
      DashboardQuery q;
      q.where = "annotation " + Str(a, "name");
      q.text = Str(a, "expr");
      out.push_back(q);
    }
  }
  for (const auto& v : d["templating"]["list"].GetArray()) {
    if (Str(v, "type") != "query") continue;
    DashboardQuery q;
    q.where = "variable " + Str(v, "name");
    q.is_variable = true;
    // Grafana 10+ stores {query, refId, qryType}; older dashboards a string.
    q.text = v["query"].IsString() ? v["query"].GetString()
                                   : Str(v["query"], "query");
    out.push_back(q);
  }
  return out;
}

std::map<std::string, Variable> Variables(const rapidjson::Document& d) {
  std::map<std::string, Variable> out;
  for (const auto& v : d["templating"]["list"].GetArray()) {
    Variable var;
    var.multi = v.HasMember("multi") && v["multi"].GetBool();
    var.include_all = v.HasMember("includeAll") && v["includeAll"].GetBool();
    var.all_value = Str(v, "allValue");
    out[Str(v, "name")] = var;
  }
  return out;
}

// Grafana's Prometheus data source escapes a multi-value or All-capable
// variable's values for use inside a regex in a PromQL string: regex
// metacharacters get a backslash, itself escaped for the string literal.
std::string RegexEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\\\\\";
    } else if (std::string_view("$^*{}[]'+?.()|").find(c) !=
               std::string_view::npos) {
      out += "\\\\";
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// The text of variable `name` with format `fmt` ("" = the data source's
// default), or an error in *err.
std::string VariableText(const std::string& name, const std::string& fmt,
                         const std::map<std::string, Variable>& vars,
                         const Selection& sel, std::string* err) {
  // Grafana's built-ins, at a 3h range and a 15s scrape interval.
  static const std::map<std::string, std::string> kBuiltin = {
      {"__rate_interval", "1m"},      {"__interval", "15s"},
      {"__interval_ms", "15000"},     {"__range", "10800s"},
      {"__range_s", "10800"},         {"__range_ms", "10800000"},
      {"__rate_interval_ms", "60000"}};
  if (auto it = kBuiltin.find(name); it != kBuiltin.end()) return it->second;
  auto v = vars.find(name);
  if (v == vars.end()) {
    *err = "unknown variable $" + name;
    return "";
  }
  auto s = sel.find(name);
  const bool all = s == sel.end() || s->second.empty();
  if (all && !v->second.all_value.empty()) return v->second.all_value;
  if (all) {
    *err = "$" + name + " has no allValue: Grafana would join every value";
    return "";
  }
  const std::vector<std::string>& values = s->second;
  if (fmt == "raw") return Join(values, ",");
  if (fmt == "pipe") return Join(values, "|");
  if (fmt != "" && fmt != "regex") {
    *err = "format :" + fmt + " of $" + name + " is not handled here";
    return "";
  }
  std::vector<std::string> esc;
  for (const auto& x : values) esc.push_back(RegexEscape(x));
  if (esc.size() == 1) return esc[0];
  return "(" + Join(esc, "|") + ")";
}

// Replaces $var, ${var}, ${var:fmt} and [[var]] as Grafana does before it
// sends a query.
std::string Interpolate(const std::string& q,
                        const std::map<std::string, Variable>& vars,
                        const Selection& sel, std::string* err) {
  static const std::regex kRef(
      R"(\$\{(\w+)(?::(\w+))?\}|\[\[(\w+)(?::(\w+))?\]\]|\$(\w+))");
  std::string out;
  auto begin = std::sregex_iterator(q.begin(), q.end(), kRef);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out += q.substr(last, m.position() - last);
    const std::string name = m[1].matched   ? m[1].str()
                             : m[3].matched ? m[3].str()
                                            : m[5].str();
    const std::string fmt = m[2].matched   ? m[2].str()
                            : m[4].matched ? m[4].str()
                                           : "";
    out += VariableText(name, fmt, vars, sel, err);
    last = m.position() + m.length();
  }
  return out + q.substr(last);
}

// A multi-value variable becomes `(a|b)`, which only a regex matcher reads
// as "a or b": returns the matchers of `q` that use one with = or !=.
std::string EqualityMatchersOnMultiValue(
    const std::string& q, const std::map<std::string, Variable>& vars) {
  static const std::regex kMatcher(R"re((=~|!~|!=|=)\s*"([^"]*)")re");
  std::string bad;
  for (auto it = std::sregex_iterator(q.begin(), q.end(), kMatcher);
       it != std::sregex_iterator(); ++it) {
    const std::string op = (*it)[1], value = (*it)[2];
    if (op == "=~" || op == "!~") continue;
    for (const auto& [name, v] : vars) {
      if (!v.multi && !v.include_all) continue;
      if (value.find("$" + name) != std::string::npos ||
          value.find("${" + name) != std::string::npos)
        bad += (*it).str() + " ";
    }
  }
  return bad;
}

// Metric names a PromQL tree reads: selector names and __name__="x".
void Names(const vigil::promql::Expr& e, std::set<std::string>* out) {
  using namespace vigil::promql;
  switch (e.kind) {
    case NodeKind::kVectorSelector: {
      const auto& vs = e.As<VectorSelector>();
      if (!vs.name.empty()) out->insert(vs.name);
      for (const auto& m : vs.matchers) {
        if (m.name() == "__name__" && m.type() == vigil::MatchType::kEqual)
          out->insert(m.value());
      }
      break;
    }
    case NodeKind::kMatrixSelector:
      Names(*e.As<MatrixSelector>().vs, out);
      break;
    case NodeKind::kSubquery:
      Names(*e.As<SubqueryExpr>().expr, out);
      break;
    case NodeKind::kCall:
      for (const auto& a : e.As<Call>().args) Names(*a, out);
      break;
    case NodeKind::kAggregate:
      if (e.As<AggregateExpr>().param) Names(*e.As<AggregateExpr>().param, out);
      Names(*e.As<AggregateExpr>().expr, out);
      break;
    case NodeKind::kBinary:
      Names(*e.As<BinaryExpr>().lhs, out);
      Names(*e.As<BinaryExpr>().rhs, out);
      break;
    case NodeKind::kUnary:
      Names(*e.As<UnaryExpr>().expr, out);
      break;
    case NodeKind::kParen:
      Names(*e.As<ParenExpr>().expr, out);
      break;
    default:
      break;
  }
}

// Checks one interpolated query; returns the metric names it reads, or an
// error. Variable queries are Grafana's, not PromQL: label_values(label),
// label_values(selector, label), label_names(), metrics(regex) and
// query_result(promql); their selector or expression is checked.
std::string CheckQuery(const std::string& text, bool is_variable,
                       std::set<std::string>* names) {
  std::string promql = text;
  if (is_variable) {
    static const std::regex kLabelValues(
        R"(^\s*label_values\(\s*(?:(.*\S)\s*,\s*)?([a-zA-Z_]\w*)\s*\)\s*$)");
    static const std::regex kQueryResult(R"(^\s*query_result\((.*)\)\s*$)");
    static const std::regex kOther(
        R"(^\s*(label_names\(\s*\)|metrics\(.*\))\s*$)");
    std::smatch m;
    if (std::regex_match(text, m, kLabelValues)) {
      if (!m[1].matched) return "";
      auto sel = vigil::promql::ParseMetricSelector(m[1].str());
      if (!sel.ok()) return std::string(sel.status().message());
      for (const auto& x : *sel) {
        if (x.name() == "__name__" && x.type() == vigil::MatchType::kEqual)
          names->insert(x.value());
      }
      return "";
    }
    if (std::regex_match(text, m, kQueryResult)) {
      promql = m[1];
    } else if (std::regex_match(text, m, kOther)) {
      return "";
    } else {
      return "not a Grafana Prometheus variable query";
    }
  }
  auto e = vigil::promql::ParseExpr(promql);
  if (!e.ok()) return std::string(e.status().message());
  Names(**e, names);
  return "";
}

std::set<std::string> RecordedNames() {
  std::set<std::string> out;
  const auto f = vigil::rules::ReadRuleFile(kLlmDir + "/rules/recording.yml");
  REQUIRE(f.ok());
  for (const auto& g : f.groups) {
    for (const auto& r : g.rules) {
      if (r.kind == vigil::rules::RuleKind::kRecording) out.insert(r.name);
    }
  }
  REQUIRE_FALSE(out.empty());
  return out;
}

// The selections each query is checked under: everything (All), one value,
// two values (Grafana's `(a|b)` form) with regex metacharacters in them.
std::vector<Selection> Selections() {
  return {
      {},
      {{"framework", {"vllm"}},
       {"variant", {"llama3-70b-fp8"}},
       {"instance", {"10.0.0.11:8000"}}},
      {{"framework", {"vllm", "sglang"}},
       {"variant", {"llama3-70b-fp8", "qwen2.5-7b-awq"}},
       {"instance", {"10.0.0.11:8000", "10.0.0.12:30000"}}},
  };
}

// The answer of one HTTP API call: the API's error (or curl's / JSON's), or
// the number of result series (1 for a scalar, the values of a label list).
struct ApiAnswer {
  std::string error;
  size_t series = 0;
};

// GET base_url + path with the URL-encoded form `params`.
ApiAnswer Api(const std::string& base_url, const std::string& path,
              const std::vector<std::pair<std::string, std::string>>& params) {
  std::string cmd = "curl -sS -G --max-time 10";
  for (const auto& [k, v] : params)
    cmd += " --data-urlencode " + ShellQuote(k + "=" + v);
  const auto res = Run(cmd + " " + ShellQuote(base_url + path));
  ApiAnswer a;
  rapidjson::Document body;
  body.Parse(res.out.c_str());
  if (res.code != 0) {
    a.error = "curl: " + res.err;
  } else if (body.HasParseError() || !body.IsObject()) {
    a.error = "not JSON: " + res.out.substr(0, 200);
  } else if (Str(body, "status") != "success") {
    a.error = Str(body, "error");
  } else if (body["data"].IsArray()) {
    a.series = body["data"].Size();  // label values
  } else if (body["data"]["result"].IsArray()) {
    a.series = body["data"]["result"].Size();
  } else {
    a.series = 1;  // a scalar
  }
  return a;
}

// A query of the dashboard against a live server, and what came back.
struct LiveResult {
  std::string where, query;
  std::string error;        // interpolation error, or the API's
  size_t series = 0;        // instant query at now (variables: values)
  size_t range_series = 0;  // range query over the last `range_s` seconds
};

// Runs every dashboard query, variables at All (the dashboard's allValue,
// as Grafana sends it), against BASE_URL: panel and annotation queries as
// an instant query now and as a range query over the last range_s seconds
// at a step of range_s / 4 (range_s 0: instant only); variable queries as
// Grafana's Prometheus data source runs label_values(selector, label), i.e.
// /api/v1/label/<label>/values?match[]=selector.
std::vector<LiveResult> CheckQueriesReturnData(const std::string& base_url,
                                               int range_s = 0) {
  const rapidjson::Document d = LoadDashboard();
  const auto vars = Variables(d);
  const std::string now = std::to_string(std::time(nullptr));
  std::vector<LiveResult> out;
  for (const auto& q : Queries(d)) {
    LiveResult r{q.where, "", "", 0, 0};
    r.query = Interpolate(q.text, vars, {}, &r.error);
    if (!r.error.empty()) {
      out.push_back(r);
      continue;
    }
    if (q.is_variable) {
      static const std::regex kLabelValues(
          R"(^\s*label_values\(\s*(.*\S)\s*,\s*([a-zA-Z_]\w*)\s*\)\s*$)");
      std::smatch m;
      if (!std::regex_match(r.query, m, kLabelValues)) {
        r.error = "not label_values(selector, label): not checked live";
      } else {
        const ApiAnswer a =
            Api(base_url, "/api/v1/label/" + m[2].str() + "/values",
                {{"match[]", m[1]}});
        r.error = a.error;
        r.series = r.range_series = a.series;
      }
      out.push_back(r);
      continue;
    }
    ApiAnswer a =
        Api(base_url, "/api/v1/query", {{"query", r.query}, {"time", now}});
    r.error = a.error;
    r.series = a.series;
    if (r.error.empty() && range_s > 0) {
      const int64_t end = std::stoll(now);
      a = Api(base_url, "/api/v1/query_range",
              {{"query", r.query},
               {"start", std::to_string(end - range_s)},
               {"end", now},
               {"step", std::to_string(std::max(1, range_s / 4))}});
      r.error = a.error;
      r.range_series = a.series;
    }
    out.push_back(r);
  }
  return out;
}

// Where vigil-sim was built: the compile definition when CMake gives one,
// else $VIGIL_SIM_BINARY, else next to `vigil` (both are in the build
// directory's top level).
std::string SimBinary() {
#ifdef VIGIL_SIM_BINARY
  return VIGIL_SIM_BINARY;
#else
  if (const char* e = std::getenv("VIGIL_SIM_BINARY")) return e;
  return (fs::path(VIGIL_BINARY).parent_path() / "vigil-sim").string();
#endif
}

// Dashboard queries that have data only while a fault is injected, and the
// fault (POST /control/fault of vigil-sim) the live test injects for them.
const std::map<std::string, std::string>& FaultFed() {
  static const std::map<std::string, std::string> k = {
      // nginx counts no 5xx series until one is answered.
      {"Gateway 5xx share", R"({"kind":"gateway-5xx","fraction":0.2})"},
      // ALERTS{severity="critical"} needs a firing critical alert: XidError
      // has for: 0m (code 13, an application fault: the GPU stays up).
      {"annotation Critical alerts",
       R"({"kind":"xid","host":0,"gpu":1,"code":13})"},
  };
  return k;
}

// Dashboard queries that return no data on the simulated fleet, and why.
// They must still run without error, and must stay empty (so the list is
// kept honest: a query that starts returning data is taken off it).
const std::map<std::string, std::string>& NoDataOnSim() {
  static const std::map<std::string, std::string> k = {
      {"panel 8 \"Requests/s\" C",
       "sglang:num_requests_total is newer than the SGLang 0.4 page the "
       "simulator follows (fixtures sglang.txt, CATALOG.md section 2); "
       "the panel's vLLM and gateway rates have data"},
  };
  return k;
}

// vigil-sim's file_sd labels each GPU host's exporters with the
// `framework` and `variant` of the engine on the same node, as
// examples/llm/prometheus.yml labels its GPU hosts (the GPU panels filter
// on them). Returns how many exporter groups carry them.
size_t GpuHostsLabelled(const std::string& sd_json) {
  rapidjson::Document d;
  d.Parse(sd_json.c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsArray());
  std::map<std::string, std::pair<std::string, std::string>> engine;
  for (const auto& g : d.GetArray()) {
    const auto& l = g["labels"];
    if (Str(l, "service") == "llm-inference")
      engine[Str(l, "node")] = {Str(l, "framework"), Str(l, "variant")};
  }
  size_t labelled = 0;
  for (const auto& g : d.GetArray()) {
    const auto& l = g["labels"];
    const std::string job = Str(l, "job");
    if (job != "dcgm-exporter" && job != "node-exporter") continue;
    auto it = engine.find(Str(l, "node"));
    REQUIRE(it != engine.end());
    CHECK(Str(l, "framework") == it->second.first);
    CHECK(Str(l, "variant") == it->second.second);
    labelled += !Str(l, "framework").empty() && !Str(l, "variant").empty();
  }
  return labelled;
}

}  // namespace

TEST_CASE("grafana dashboard has what Grafana's import needs", "[grafana]") {
  const rapidjson::Document d = LoadDashboard();
  for (const char* k : {"uid", "title", "schemaVersion", "panels", "time",
                        "refresh", "templating", "annotations"}) {
    INFO(k);
    CHECK(d.HasMember(k));
  }
  CHECK(d["uid"].IsString());
  CHECK(d["uid"].GetStringLength() <= 40);
  CHECK(d["schemaVersion"].GetInt() >= 36);  // Grafana 9.x and later
  CHECK(d["time"].HasMember("from"));
  CHECK(d["time"].HasMember("to"));

  // A ${datasource} variable of type prometheus, used by every panel and
  // query variable.
  bool have_ds = false;
  for (const auto& v : d["templating"]["list"].GetArray()) {
    INFO(Str(v, "name"));
    CHECK_FALSE(Str(v, "name").empty());
    if (Str(v, "type") == "datasource") {
      have_ds =
          Str(v, "name") == "datasource" && Str(v, "query") == "prometheus";
    } else if (Str(v, "type") == "query") {
      CHECK(Str(v["datasource"], "uid") == "${datasource}");
    }
  }
  CHECK(have_ds);
  const auto vars = Variables(d);
  for (const char* v : {"framework", "variant", "instance"}) {
    INFO(v);
    REQUIRE(vars.count(v));
    CHECK(vars.at(v).multi);
    CHECK(vars.at(v).include_all);
  }

  std::vector<const rapidjson::Value*> panels;
  Panels(d["panels"], &panels);
  std::set<int> ids;
  std::set<std::string> rows, types;
  for (const auto* p : panels) {
    INFO(Str(*p, "title"));
    REQUIRE(p->HasMember("id"));
    CHECK(ids.insert((*p)["id"].GetInt()).second);
    CHECK_FALSE(Str(*p, "type").empty());
    REQUIRE(p->HasMember("gridPos"));
    const auto& g = (*p)["gridPos"];
    for (const char* k : {"h", "w", "x", "y"}) CHECK(g.HasMember(k));
    CHECK(g["x"].GetInt() + g["w"].GetInt() <= 24);
    types.insert(Str(*p, "type"));
    if (Str(*p, "type") == "row") {
      rows.insert(Str(*p, "title"));
      continue;
    }
    CHECK(Str((*p)["datasource"], "type") == "prometheus");
    CHECK(Str((*p)["datasource"], "uid") == "${datasource}");
    REQUIRE(p->HasMember("targets"));
    CHECK((*p)["targets"].Size() > 0);
    for (const auto& t : (*p)["targets"].GetArray()) {
      CHECK_FALSE(Str(t, "refId").empty());
      CHECK_FALSE(Str(t, "expr").empty());
    }
  }
  // Section 5.6's rows plus the data-freshness row, and the GPU heat map.
  for (const char* r : {"Overview", "Engine", "GPU", "Capacity"}) {
    INFO(r);
    CHECK(rows.count(r));
  }
  CHECK(std::any_of(rows.begin(), rows.end(), [](const std::string& r) {
    return r.find("freshness") != std::string::npos;
  }));
  CHECK(types.count("heatmap"));
}

TEST_CASE("grafana dashboard queries parse with every variable selection",
          "[grafana]") {
  const rapidjson::Document d = LoadDashboard();
  const auto vars = Variables(d);
  const auto queries = Queries(d);
  CHECK(queries.size() > 30);
  for (const auto& sel : Selections()) {
    for (const auto& q : queries) {
      std::string err;
      const std::string text = Interpolate(q.text, vars, sel, &err);
      INFO(q.where << "\n  " << q.text << "\n  -> " << text);
      CHECK(err.empty());
      CHECK(EqualityMatchersOnMultiValue(q.text, vars).empty());
      std::set<std::string> names;
      CHECK(CheckQuery(text, q.is_variable, &names).empty());
    }
  }
}

TEST_CASE("grafana variable interpolation follows the Prometheus data source",
          "[grafana]") {
  std::map<std::string, Variable> vars = {{"v", {true, true, ".*"}}};
  std::string err;
  CHECK(Interpolate(R"(x{a=~"$v"}[$__rate_interval])", vars, {}, &err) ==
        R"(x{a=~".*"}[1m])");
  CHECK(Interpolate(R"(x{a=~"${v}"})", vars, {{"v", {"h:1"}}}, &err) ==
        R"(x{a=~"h:1"})");
  CHECK(Interpolate(R"(x{a=~"[[v]]"})", vars, {{"v", {"a.b", "c"}}}, &err) ==
        R"q(x{a=~"(a\\.b|c)"})q");
  CHECK(Interpolate("${v:pipe}", vars, {{"v", {"a.b", "c"}}}, &err) == "a.b|c");
  CHECK(err.empty());
  Interpolate("$nope", vars, {}, &err);
  CHECK(err == "unknown variable $nope");
  // Grafana's label_values() is not PromQL: its selector is what is checked.
  std::set<std::string> names;
  CHECK(CheckQuery(R"(label_values(up{job="x"}, instance))", true, &names)
            .empty());
  CHECK(names == std::set<std::string>{"up"});
  CHECK(CheckQuery("label_values(job)", true, &names).empty());
  CHECK_FALSE(
      CheckQuery("label_values(rate(x[5m]), job)", true, &names).empty());
  CHECK_FALSE(CheckQuery("up", true, &names).empty());
}

TEST_CASE("grafana dashboard reads only llm:* series the rules record",
          "[grafana]") {
  const rapidjson::Document d = LoadDashboard();
  const auto vars = Variables(d);
  const std::set<std::string> recorded = RecordedNames();
  std::set<std::string> used;
  for (const auto& q : Queries(d)) {
    std::string err;
    std::set<std::string> names;
    CheckQuery(Interpolate(q.text, vars, {}, &err), q.is_variable, &names);
    for (const auto& n : names) {
      if (n.rfind("llm:", 0) != 0) continue;
      INFO(q.where << " reads " << n);
      CHECK(recorded.count(n));
      used.insert(n);
    }
  }
  // And the dashboard is built on them: every recording rule has a panel.
  for (const auto& r : recorded) {
    INFO(r << " is recorded but on no panel");
    CHECK(used.count(r));
  }
}

TEST_CASE("grafana dashboard raw metrics are ones the exporters emit",
          "[grafana][shared]") {
  const std::string fx = kShared + "/fixtures/metrics";
  if (!fs::exists(fx + "/CATALOG.md")) {
    WARN("SKIPPED: no " << fx << "/CATALOG.md (set VIGIL_SHARED_DIR)");
    return;
  }
  // Where a name may come from: the exporters' catalog and captured pages,
  // and Vigil's own /metrics (registered by name in server/).
  std::string corpus = ReadFile(fx + "/CATALOG.md");
  for (const auto& e : fs::directory_iterator(fx)) {
    if (e.path().extension() == ".txt") corpus += ReadFile(e.path().string());
  }
  for (const auto& e : fs::recursive_directory_iterator(
           std::string(VIGIL_SOURCE_DIR) + "/server")) {
    if (e.path().extension() == ".cc") corpus += ReadFile(e.path().string());
  }
  const rapidjson::Document d = LoadDashboard();
  const auto vars = Variables(d);
  for (const auto& q : Queries(d)) {
    std::string err;
    std::set<std::string> names;
    CheckQuery(Interpolate(q.text, vars, {}, &err), q.is_variable, &names);
    for (const auto& n : names) {
      if (n.rfind("llm:", 0) == 0 || n == "up" || n == "ALERTS") continue;
      INFO(q.where << " reads " << n << ", which no exporter emits");
      CHECK(corpus.find(n) != std::string::npos);
    }
  }
}

TEST_CASE("grafana dashboard thresholds are the alert thresholds",
          "[grafana]") {
  // Alerts of the form `<series> > N` (N != 0): some panel showing that
  // series must draw a threshold at N.
  const auto alerts = vigil::rules::ReadRuleFile(kLlmDir + "/rules/alerts.yml");
  REQUIRE(alerts.ok());
  std::vector<std::pair<std::string, double>> lines;
  for (const auto& g : alerts.groups) {
    for (const auto& r : g.rules) {
      using namespace vigil::promql;
      if (r.expr->kind != NodeKind::kBinary) continue;
      const auto& b = r.expr->As<BinaryExpr>();
      if (b.op != BinOp::kGtr || b.lhs->kind != NodeKind::kVectorSelector ||
          b.rhs->kind != NodeKind::kNumberLiteral)
        continue;
      const double n = b.rhs->As<NumberLiteral>().value;
      if (n != 0) lines.emplace_back(b.lhs->As<VectorSelector>().name, n);
    }
  }
  CHECK(lines.size() >= 7);  // KV x2, queue x2, TTFT, TPOT, GPU temperature

  // A panel of a recorded series shows what its expression reads (the
  // hottest-GPU panel draws GPUTempHigh's line over llm:gpu_temp_max:1m).
  const auto recording =
      vigil::rules::ReadRuleFile(kLlmDir + "/rules/recording.yml");
  REQUIRE(recording.ok());
  std::map<std::string, std::set<std::string>> reads;
  for (const auto& g : recording.groups) {
    for (const auto& r : g.rules) {
      CheckQuery(r.expr_text, false, &reads[r.name]);
    }
  }

  const rapidjson::Document d = LoadDashboard();
  const auto vars = Variables(d);
  const auto queries = Queries(d);
  for (const auto& [name, n] : lines) {
    bool found = false;
    for (const auto& q : queries) {
      std::string err;
      std::set<std::string> names;
      CheckQuery(Interpolate(q.text, vars, {}, &err), q.is_variable, &names);
      for (const std::string& used : std::set<std::string>(names)) {
        auto it = reads.find(used);
        if (it != reads.end())
          names.insert(it->second.begin(), it->second.end());
      }
      if (!names.count(name)) continue;
      for (double t : q.thresholds) found |= std::fabs(t - n) < 1e-9;
    }
    INFO("no panel of " << name << " has a threshold at " << n);
    CHECK(found);
  }
}

TEST_CASE("grafana dashboard JSON is build_dashboard.py's output",
          "[grafana]") {
  if (!HaveCommand("python3")) {
    WARN("SKIPPED: python3 not on PATH");
    return;
  }
  const auto r = Run("python3 '" + kLlmDir + "/grafana/build_dashboard.py'");
  REQUIRE(r.code == 0);
  INFO(
      "regenerate: python3 examples/llm/grafana/build_dashboard.py > "
      "examples/llm/grafana/llm-inference.json");
  CHECK(r.out == ReadFile(kDashboard));
}

TEST_CASE("grafana dashboard queries return data from a live server",
          "[grafana][.live]") {
  const char* url = std::getenv("VIGIL_DASHBOARD_LIVE_URL");
  if (url == nullptr) {
    WARN("SKIPPED: set VIGIL_DASHBOARD_LIVE_URL=http://host:port");
    return;
  }
  for (const auto& r : CheckQueriesReturnData(url)) {
    INFO(r.where << "\n  " << r.query);
    CHECK(r.error.empty());
    if (r.error.empty() && r.series == 0) WARN(r.where << ": no data");
  }
}

TEST_CASE("grafana dashboard queries return data from vigil fed by vigil-sim",
          "[grafana][live_sim]") {
  using vigil::testutil::FreePort;
  using vigil::testutil::Process;
  using vigil::testutil::TempDir;
  using vigil::testutil::WaitHttp;
  const std::string sim_bin = SimBinary();
  INFO("vigil-sim at " << sim_bin << " (build target vigil-sim)");
  REQUIRE(fs::exists(sim_bin));
  TempDir dir;
  const std::string sd = dir.Sub("sd.json");

  // A small mixed fleet: a vLLM V1 and an SGLang host, 2 GPUs each, with the
  // ECC counters (the ECC panel needs them).
  Process sim({sim_bin, "--hosts=2", "--engines=vllm-v1,sglang", "--gpus=2",
               "--cpus=4", "--ecc", "--listen=127.0.0.1:0", "--sd-file=" + sd},
              dir.Sub("sim.log"));
  std::string control;
  for (int i = 0; i < 100 && control.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string log = ReadFile(dir.Sub("sim.log"));
    std::smatch m;
    if (std::regex_search(log, m, std::regex("control on ([0-9.:]+)")))
      control = m[1];
  }
  INFO(ReadFile(dir.Sub("sim.log")));
  REQUIRE_FALSE(control.empty());
  REQUIRE(ReadFile(sd).find("\"job\":\"sglang\"") != std::string::npos);
  CHECK(GpuHostsLabelled(ReadFile(sd)) == 2 * 2);  // dcgm + node, 2 hosts
  const std::string targets = sd;
  for (const auto& [what, fault] : FaultFed()) {
    INFO(what << ": " << fault);
    const auto r =
        Run("curl -sS -o /dev/null -w '%{http_code}' -XPOST -d " +
            ShellQuote(fault) + " http://" + control + "/control/fault");
    CHECK(r.out == "201");
  }

  // The rule pack at a 1 s evaluation interval (the recording group sets
  // its own 15s: that one line is changed in a copy), scrapes every second,
  // Vigil scraping itself as job "vigil" (the freshness row), and an
  // Alertmanager nobody listens on (the notification-error series).
  std::string recording = ReadFile(kLlmDir + "/rules/recording.yml");
  const std::string before = recording;
  recording = std::regex_replace(recording, std::regex("\n    interval: 15s\n"),
                                 "\n    interval: 1s\n");
  REQUIRE(recording != before);
  std::ofstream(dir.Sub("recording.yml")) << recording;
  const int port = FreePort();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  std::ofstream(dir.Sub("prometheus.yml"))
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "  evaluation_interval: 1s\n"
      << "rule_files:\n  - " << dir.Sub("recording.yml") << "\n  - " << kLlmDir
      << "/rules/alerts.yml\n"
      << "alerting:\n  alertmanagers:\n    - static_configs:\n"
      << "        - targets: ['127.0.0.1:" << FreePort() << "']\n"
      << "scrape_configs:\n  - job_name: sim\n    file_sd_configs:\n"
      << "      - files: ['" << targets << "']\n"
      << "  - job_name: vigil\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << port << "']\n";
  Process vigil({VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
                 "--storage.tsdb.path=" + dir.Sub("data"),
                 "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                dir.Sub("vigil.log"));
  INFO(ReadFile(dir.Sub("vigil.log")));
  REQUIRE(WaitHttp(base + "/-/ready"));

  // Until every query has data (the rules need two scrapes for rate()), at
  // most 60 s.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<LiveResult> results;
  while (true) {
    results = CheckQueriesReturnData(base, 10);
    const bool all =
        std::all_of(results.begin(), results.end(), [](const LiveResult& r) {
          return r.error.empty() && ((r.series > 0 && r.range_series > 0) ||
                                     NoDataOnSim().count(r.where));
        });
    if (all || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  CHECK(results.size() > 30);
  for (const auto& r : results) {
    INFO(r.where << "\n  " << r.query);
    CHECK(r.error.empty());
    if (auto it = NoDataOnSim().find(r.where); it != NoDataOnSim().end()) {
      INFO("listed as having no data here (" << it->second
                                             << "); it has now: unlist it");
      CHECK(r.series + r.range_series == 0);
      continue;
    }
    CHECK(r.series > 0);
    CHECK(r.range_series > 0);
  }
  for (const auto& [where, why] : NoDataOnSim()) {
    INFO(where << " is not a query of the dashboard");
    CHECK(std::any_of(
        results.begin(), results.end(),
        // clang 14 cannot capture a structured binding.
        [&w = where](const LiveResult& r) { return r.where == w; }));
  }

  // The dashboard's framework filter reaches the llm:* series: the rules
  // keep the target's `framework` label (one engine target each).
  for (const char* fw : {"vllm", "sglang"}) {
    for (const char* rule : {"llm:kv_usage:1m", "llm:out_tps:5m",
                             "llm:ttft_p99:5m", "llm:queue_max:1m"}) {
      const std::string q = std::string(rule) + "{framework=\"" + fw + "\"}";
      const ApiAnswer a = Api(base, "/api/v1/query", {{"query", q}});
      INFO(q << ": " << a.error);
      CHECK(a.series == 1);
    }
  }

  vigil.Signal(SIGTERM);
  CHECK(vigil.Wait(15000) == 0);
  sim.Signal(SIGTERM);
  CHECK(sim.Wait(5000) >= 0);
}

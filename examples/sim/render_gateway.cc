// The fleet's ingress-nginx controller (ingress-nginx.txt, v1.15.1): one
// ingress per tenant routing to one Service per engine kind. Request
// series exist once a request has been seen with that status, as
// client_golang creates children; families sorted by name, Go floats, le
// last.
#include <cmath>

#include "examples/sim/format.h"
#include "examples/sim/render.h"

namespace vigil::sim {

using internal::LabelPairs;
using internal::Labels;
using internal::PageWriter;

std::string RenderGateway(const Config& c, const std::vector<HostLoad>& hosts,
                          const GatewayState& s) {
  std::string out;
  out.reserve(64 * 1024);
  PageWriter w(&out, AppendGo);
  const char* pod = "ingress-nginx-controller-6c8f9d7b5-q4m2x";
  LabelPairs ctrl = {{"controller_class", "k8s.io/ingress-nginx"},
                     {"controller_namespace", "ingress-nginx"},
                     {"controller_pod", pod}};
  std::string lc = Labels(ctrl);
  auto one = [&](const char* name, const char* type, const char* help,
                 double v) {
    w.Family(name, type, help);
    w.Sample(name, lc, v);
  };
  // Request label sets that have seen a request, in label order.
  struct Route {
    LabelPairs labels;
    const RouteState* r;
  };
  std::vector<Route> routes;
  for (int tn = 0; tn < kTenants; ++tn) {
    for (int sv = 0; sv < kServices; ++sv) {
      for (int st = 0; st < kStatuses; ++st) {
        const RouteState& r = s.routes[size_t(tn)][size_t(sv)][size_t(st)];
        if (std::floor(r.requests) < 1) continue;
        std::string tenant = kTenantNames[tn];
        routes.push_back({{{"canary", ""},
                           {"controller_class", "k8s.io/ingress-nginx"},
                           {"controller_namespace", "ingress-nginx"},
                           {"controller_pod", pod},
                           {"host", tenant + ".llm.example.com"},
                           {"ingress", "llm-" + tenant},
                           {"method", "POST"},
                           {"namespace", tenant},
                           {"path", "/v1"},
                           {"service", kServiceNames[sv]},
                           {"status", kStatusNames[st]}},
                          &r});
      }
    }
  }
  double in_flight = 0, total = 0;
  for (const auto& l : hosts) {
    in_flight += l.running + l.waiting;
    total += l.arrivals;
  }
  auto hist = [&](const char* name, const char* help, Hist RouteState::*m,
                  const std::vector<double>& les) {
    w.Family(name, "histogram", help);
    for (const auto& r : routes) {
      w.Histogram(name, r.labels, les, r.r->*m, true, "bsc");
    }
  };
  w.Family("nginx_ingress_controller_build_info", "gauge",
           "A metric with a constant '1' labeled with information about the "
           "build.");
  w.Sample(
      "nginx_ingress_controller_build_info",
      Labels({{"build", "0df02f2cfcf5fe4ad3cf31492bca770ac2a1606a"},
              {"controller_class", "k8s.io/ingress-nginx"},
              {"controller_namespace", "ingress-nginx"},
              {"controller_pod", pod},
              {"release", "v1.15.1"},
              {"repository", "https://github.com/kubernetes/ingress-nginx"}}),
      1);
  one("nginx_ingress_controller_config_hash", "gauge",
      "Running configuration hash actually running", 3.1325924438330885e+18);
  one("nginx_ingress_controller_config_last_reload_successful", "gauge",
      "Whether the last configuration reload attempt was successful", 1);
  one("nginx_ingress_controller_config_last_reload_successful_timestamp_"
      "seconds",
      "gauge", "Timestamp of the last successful configuration reload.",
      double(c.start) + 2);
  w.Family("nginx_ingress_controller_nginx_process_connections", "gauge",
           "current number of client connections with state {active, "
           "reading, writing, waiting}");
  double active = std::round(in_flight + 12);
  const std::pair<const char*, double> states[] = {
      {"active", active},
      {"reading", 0},
      {"waiting", std::round(active * 0.1)},
      {"writing", std::round(active * 0.9)}};
  for (const auto& [st, v] : states) {
    LabelPairs l = ctrl;
    l.push_back({"state", st});
    w.Sample("nginx_ingress_controller_nginx_process_connections", Labels(l),
             v);
  }
  double requests = 0;
  for (const auto& r : routes) requests += std::floor(r.r->requests);
  w.Family("nginx_ingress_controller_nginx_process_connections_total",
           "counter",
           "total number of connections with state {accepted, handled}");
  for (const char* st : {"accepted", "handled"}) {
    LabelPairs l = ctrl;
    l.push_back({"state", st});
    w.Sample("nginx_ingress_controller_nginx_process_connections_total",
             Labels(l), std::floor(requests / 40) + 21);
  }
  one("nginx_ingress_controller_nginx_process_cpu_seconds_total", "counter",
      "Cpu usage in seconds", std::round(s.cpu * 100) / 100);
  one("nginx_ingress_controller_nginx_process_num_procs", "gauge",
      "number of processes", 12);
  one("nginx_ingress_controller_nginx_process_requests_total", "counter",
      "total number of client requests", requests + 20);
  one("nginx_ingress_controller_nginx_process_resident_memory_bytes", "gauge",
      "number of bytes of memory in use",
      2.1164032e+08 + 4096 * std::round(total));
  one("nginx_ingress_controller_nginx_process_write_bytes_total", "counter",
      "number of bytes written", std::floor(s.bytes_written));
  hist("nginx_ingress_controller_request_duration_seconds",
       "The request processing time in milliseconds",
       &RouteState::request_duration, kGoDefBuckets);
  hist("nginx_ingress_controller_request_size",
       "The request length (including request line, header, and request "
       "body)",
       &RouteState::request_size, kLengthBuckets);
  w.Family("nginx_ingress_controller_requests", "counter",
           "The total number of client requests");
  for (const auto& r : routes) {
    w.Sample("nginx_ingress_controller_requests", Labels(r.labels),
             std::floor(r.r->requests));
  }
  hist("nginx_ingress_controller_response_duration_seconds",
       "The time spent on receiving the response from the upstream server",
       &RouteState::response_duration, kGoDefBuckets);
  hist("nginx_ingress_controller_response_size",
       "The response length (including request line, header, and request "
       "body)",
       &RouteState::response_size, kLengthBuckets);
  one("nginx_ingress_controller_success", "counter",
      "Cumulative number of Ingress controller reload operations", 1);
  return out;
}

}  // namespace vigil::sim

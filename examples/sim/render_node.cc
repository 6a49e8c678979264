// A node-exporter subset (node-exporter-e2e.txt names and HELP texts):
// CPU time per mode (softirq included), load, memory, network, disk,
// softnet, pressure. client_golang sorts families by name and prints Go
// floats.
#include <cmath>

#include "examples/sim/format.h"
#include "examples/sim/render.h"

namespace vigil::sim {

using internal::Labels;
using internal::PageWriter;

std::string RenderNode(const HostPage& p) {
  std::string out;
  out.reserve(64 * 1024);
  PageWriter w(&out, AppendGo);
  const HostState& s = p.s;
  const HostLoad& l = p.l;
  const double boot = double(p.c.start) - 86400 * 3 - 517;
  auto one = [&](const char* name, const char* type, const char* help,
                 double v) {
    w.Family(name, type, help);
    w.Sample(name, "", v);
  };
  one("node_boot_time_seconds", "gauge", "Node boot time, in unixtime.", boot);
  one("node_context_switches_total", "counter",
      "Total number of context switches.", std::floor(s.ctx_switches));
  w.Family("node_cpu_seconds_total", "counter",
           "Seconds the CPUs spent in each mode.");
  const double before = double(p.c.start) - boot;  // uptime at start
  for (size_t c = 0; c < s.cpu.size(); ++c) {
    std::string cpu = std::to_string(c);
    for (int m = 0; m < kCpuModes; ++m) {
      double v =
          s.cpu[c][size_t(m)] + (m == 0 ? before * 0.97 : before * 0.004);
      w.Sample("node_cpu_seconds_total",
               Labels({{"cpu", cpu}, {"mode", kCpuModeNames[m]}}),
               std::round(v * 100) / 100);
    }
  }
  auto disk = [&](const char* name, const char* help, double v) {
    w.Family(name, "counter", help);
    w.Sample(name, Labels({{"device", "nvme0n1"}}), v);
  };
  disk("node_disk_io_time_seconds_total", "Total seconds spent doing I/Os.",
       std::round(s.disk_io * 1000) / 1000);
  disk("node_disk_read_bytes_total",
       "The total number of bytes read successfully.",
       std::floor(s.disk_read + 2.1e11));
  disk("node_disk_written_bytes_total",
       "The total number of bytes written successfully.",
       std::floor(s.disk_written + 9.8e10));
  one("node_filefd_allocated", "gauge",
      "File descriptor statistics: allocated.",
      std::floor(9000 + 3 * l.running));
  one("node_intr_total", "counter", "Total number of interrupts serviced.",
      std::floor(s.intr));
  double load1 = std::round(l.cpu_busy * 100) / 100;
  one("node_load1", "gauge", "1m load average.", load1);
  one("node_load15", "gauge", "15m load average.",
      std::round(l.cpu_busy * 0.9 * 100) / 100);
  one("node_load5", "gauge", "5m load average.",
      std::round(l.cpu_busy * 0.95 * 100) / 100);
  const double total = 2.0 * 1024 * 1024 * 1024 * 1024;  // 2 TiB
  one("node_memory_Cached_bytes", "gauge",
      "Memory information field Cached_bytes.", 6.1e11);
  one("node_memory_MemFree_bytes", "gauge",
      "Memory information field MemFree_bytes.",
      std::floor(total - 6.1e11 - 3.4e11 - 1e8 * l.running / 64) / 4096 * 4096);
  one("node_memory_MemTotal_bytes", "gauge",
      "Memory information field MemTotal_bytes.", total);
  one("node_memory_Shmem_bytes", "gauge",
      "Memory information field Shmem_bytes.", 1.7179869184e+10);
  auto net = [&](const char* name, const char* help, const auto& v) {
    w.Family(name, "counter", help);
    for (int d = 0; d < kNetDevices; ++d) {
      w.Sample(name, Labels({{"device", kNetDeviceNames[d]}}),
               std::floor(v[size_t(d)]));
    }
  };
  net("node_network_receive_bytes_total",
      "Network device statistic receive_bytes.", s.rx);
  net("node_network_transmit_bytes_total",
      "Network device statistic transmit_bytes.", s.tx);
  one("node_pressure_cpu_waiting_seconds_total", "counter",
      "Total time in seconds that processes have waited for CPU time",
      s.pressure_cpu);
  one("node_procs_running", "gauge", "Number of processes in runnable state.",
      std::round(1 + l.cpu_busy));
  w.Family("node_softnet_dropped_total", "counter",
           "Number of dropped packets");
  for (size_t c = 0; c < s.softnet.size(); ++c) {
    w.Sample("node_softnet_dropped_total", Labels({{"cpu", std::to_string(c)}}),
             0);
  }
  w.Family("node_softnet_processed_total", "counter",
           "Number of processed packets");
  for (size_t c = 0; c < s.softnet.size(); ++c) {
    w.Sample("node_softnet_processed_total",
             Labels({{"cpu", std::to_string(c)}}), std::floor(s.softnet[c]));
  }
  one("node_time_seconds", "gauge",
      "System time in seconds since epoch (1970).", double(p.t) + 0.25);
  return out;
}

}  // namespace vigil::sim

// dcgm-exporter 4.x's page (dcgm-exporter-*.txt): one family per field in
// the counters-CSV order, labels in the exporter's fixed template order
// (gpu, UUID, pci_bus_id, device, modelName, Hostname, then the CSV label
// fields), integer fields as integers and float fields with six decimals.
// DCGM_FI_DEV_XID_ERRORS is a gauge holding the code of the last XID, with
// err_code/err_msg labels. The ECC counters are off in dcgm-exporter's
// default CSV and appear only with --ecc.
#include <cmath>

#include "examples/sim/format.h"
#include "examples/sim/render.h"
#include "fmt/format.h"

namespace vigil::sim {

namespace {

constexpr double kFbTotal = 81559;  // MiB, H100 80GB HBM3
constexpr double kFbReserved = 586;

const char* XidMessage(int code) {
  switch (code) {
    case 0:
      return "No Error";
    case 13:
      return "Graphics Engine Exception";
    case 31:
      return "GPU memory page fault";
    case 43:
      return "GPU stopped processing";
    case 48:
      return "Double Bit ECC Error";
    case 63:
      return "ECC page retirement or row remapping recording event";
    case 64:
      return "ECC page retirement or row remapper recording failure";
    case 74:
      return "NVLINK Error";
    case 79:
      return "GPU has fallen off the bus";
    case 94:
      return "Contained ECC error";
    case 95:
      return "Uncontained ECC error";
    default:
      return "Unknown Error";
  }
}

struct Field {
  const char* name;
  const char* type;
  const char* help;
  bool is_float;
  double (*value)(const HostPage&, int g);
};

const GpuLoad& U(const HostPage& p, int g) { return p.l.gpus[size_t(g)]; }
const GpuState& S(const HostPage& p, int g) { return p.s.gpus[size_t(g)]; }

double FbUsed(const HostPage& p, int g) {
  if (U(p, g).lost) return 0;
  // vLLM reserves gpu_memory_utilization (0.9) of the memory up front.
  return std::floor(kFbTotal * 0.9 + 310 + 40 * (p.l.kv > 0.95 ? 1 : 0));
}

const Field kFields[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", false,
     [](const HostPage& p, int g) { return std::round(U(p, g).sm_clock); }},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).",
     false,
     [](const HostPage& p, int g) { return U(p, g).lost ? 0.0 : 2619.0; }},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", false,
     [](const HostPage& p, int g) {
       return U(p, g).lost ? 0.0 : std::round(U(p, g).temp + 4);
     }},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", false,
     [](const HostPage& p, int g) { return std::round(U(p, g).temp); }},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", true,
     [](const HostPage& p, int g) {
       return std::round(U(p, g).power * 1000) / 1000;
     }},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
     "Total energy consumption since boot (in mJ).", false,
     [](const HostPage& p, int g) { return std::floor(S(p, g).energy_mj); }},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter",
     "Total number of PCIe retries.", false,
     [](const HostPage& p, int g) { return std::floor(S(p, g).pcie_replay); }},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", false,
     [](const HostPage& p, int g) { return U(p, g).util; }},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", false,
     [](const HostPage& p, int g) { return std::round(U(p, g).dram * 80); }},
    {"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", false,
     [](const HostPage&, int) { return 0.0; }},
    {"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", false,
     [](const HostPage&, int) { return 0.0; }},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge",
     "Value of the last XID error encountered.", false,
     [](const HostPage& p, int g) { return double(U(p, g).xid); }},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", false,
     [](const HostPage& p, int g) {
       return U(p, g).lost ? 0.0 : kFbTotal - kFbReserved - FbUsed(p, g);
     }},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", false,
     FbUsed},
    {"DCGM_FI_DEV_FB_RESERVED", "gauge",
     "Framebuffer memory reserved (in MiB).", false,
     [](const HostPage& p, int g) { return U(p, g).lost ? 0.0 : kFbReserved; }},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for uncorrectable errors", false,
     [](const HostPage& p, int g) { return std::floor(S(p, g).dbe_agg); }},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for correctable errors", false,
     [](const HostPage& p, int g) { return std::floor(S(p, g).remap_corr); }},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge",
     "Whether remapping of rows has failed", false,
     [](const HostPage&, int) { return 0.0; }},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter",
     "Total number of NVLink bandwidth counters for all lanes.", false,
     [](const HostPage& p, int g) { return std::floor(S(p, g).nvlink); }},
    {"DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status", false,
     [](const HostPage&, int) { return 0.0; }},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge",
     "Ratio of time the graphics engine is active.", true,
     [](const HostPage& p, int g) {
       return std::round(U(p, g).util / 100 * 0.97e6) / 1e6;
     }},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
     "Ratio of cycles the tensor (HMMA) pipe is active.", true,
     [](const HostPage& p, int g) {
       return std::round(U(p, g).tensor * 1e6) / 1e6;
     }},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
     "Ratio of cycles the device memory interface is active sending or "
     "receiving data.",
     true,
     [](const HostPage& p, int g) {
       return std::round(U(p, g).dram * 1e6) / 1e6;
     }},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",
     "The rate of data transmitted over the PCIe bus - including both "
     "protocol headers and data payloads - in bytes per second.",
     false,
     [](const HostPage& p, int g) {
       return std::round(3e6 + U(p, g).util * 2.1e5);
     }},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",
     "The rate of data received over the PCIe bus - including both protocol "
     "headers and data payloads - in bytes per second.",
     false,
     [](const HostPage& p, int g) {
       return std::round(2e6 + U(p, g).util * 1.3e5);
     }},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge",
     "Current clock throttle reasons (bitmask of "
     "DCGM_CLOCKS_THROTTLE_REASON_*).",
     false, [](const HostPage& p, int g) { return double(U(p, g).throttle); }},
};

const Field kEccFields[] = {
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter",
     "Total number of single-bit volatile ECC errors.", false,
     [](const HostPage& p, int g) { return std::floor(S(p, g).sbe_vol); }},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",
     "Total number of double-bit volatile ECC errors.", false,
     [](const HostPage& p, int g) { return std::floor(S(p, g).dbe_vol); }},
    {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter",
     "Total number of single-bit persistent ECC errors.", false,
     [](const HostPage& p, int g) { return std::floor(S(p, g).sbe_agg); }},
    {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter",
     "Total number of double-bit persistent ECC errors.", false,
     [](const HostPage& p, int g) { return std::floor(S(p, g).dbe_agg); }},
};

}  // namespace

std::string GpuUuid(uint64_t seed, int h, int g) {
  uint64_t a = uint64_t(Hash01(seed, uint64_t(h) * 64 + uint64_t(g), 21) *
                        double(1ULL << 52));
  uint64_t b = uint64_t(Hash01(seed, uint64_t(h) * 64 + uint64_t(g), 22) *
                        double(1ULL << 52));
  return fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                     uint32_t(a >> 20), uint32_t(a >> 4) & 0xffff,
                     uint32_t(b >> 36) & 0xffff, uint32_t(b >> 20) & 0xffff,
                     b & 0xffffffffffffULL);
}

std::string RenderDcgm(const HostPage& p) {
  std::string out;
  out.reserve(48 * 1024);
  // Per GPU label strings, the XID one with err_code/err_msg.
  std::vector<std::string> labels, xid_labels;
  static const char* const kBus[] = {"18", "2A", "3A", "5D",
                                     "9A", "AB", "BA", "DB"};
  for (int g = 0; g < p.c.gpus; ++g) {
    std::string bus = fmt::format("00000000:{}:00.0", kBus[g % 8]);
    std::string head = fmt::format(
        "{{gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"{}\",device=\"nvidia{}\","
        "modelName=\"{}\",Hostname=\"{}\",DCGM_FI_DRIVER_VERSION=\"580.105."
        "08\"",
        g, GpuUuid(p.c.seed, p.h, g), bus, g, p.c.gpu_model, HostName(p.h));
    labels.push_back(head + "}");
    int xid = p.l.gpus[size_t(g)].xid;
    xid_labels.push_back(head + fmt::format(",err_code=\"{}\",err_msg=\"{}\"}}",
                                            xid, XidMessage(xid)));
  }
  auto write = [&](const Field& f) {
    out.append("# HELP ").append(f.name).append(" ").append(f.help);
    out.append("\n# TYPE ").append(f.name).append(" ").append(f.type);
    out.push_back('\n');
    bool xid = std::string_view(f.name) == "DCGM_FI_DEV_XID_ERRORS";
    for (int g = 0; g < p.c.gpus; ++g) {
      AppendSeries(&out, f.name,
                   xid ? xid_labels[size_t(g)] : labels[size_t(g)]);
      double v = f.value(p, g);
      if (f.is_float) {
        AppendDcgmFloat(&out, v);
      } else {
        AppendDcgmInt(&out, v);
      }
      out.push_back('\n');
    }
  };
  for (const Field& f : kFields) write(f);
  if (p.c.ecc) {
    for (const Field& f : kEccFields) write(f);
  }
  return out;
}

}  // namespace vigil::sim

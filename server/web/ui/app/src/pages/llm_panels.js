// The panels of the LLM cluster board (../shared/llm-monitoring.md), the
// same queries as examples/llm/grafana/build_dashboard.py. `E` is the
// engine label filter, `G` the GPU one (filled in by llm.js).
//
// kind: ts (range graph), stat (one instant value), heat (heat map per
// GPU), table (instant values per series), throttle (decoded bitmask).
// bands: thresholds drawn as translucent bands.

// Alert thresholds of examples/llm/rules/alerts.yml.
export const T = {
  KV_WARN: 0.85, KV_CRIT: 0.97, QUEUE_WARN: 4, QUEUE_CRIT: 16, TTFT_P99_CRIT: 2,
  TPOT_P95_WARN: 0.1, GPU_TEMP_WARN: 85, GATEWAY_5XX_CRIT: 0.01, HEADROOM_LOW: 0.2,
};

const ORANGE = 'rgba(255,165,0,0.15)';
const RED = 'rgba(220,0,0,0.13)';

// Bits of DCGM_FI_DEV_CLOCKS_EVENT_REASONS (NVML clocks event reasons).
export const CLOCK_REASONS = [
  [0x1, 'GpuIdle', false], [0x2, 'ApplicationsClocksSetting', false], [0x4, 'SwPowerCap', false],
  [0x8, 'HwSlowdown', true], [0x10, 'SyncBoost', false], [0x20, 'SwThermalSlowdown', true],
  [0x40, 'HwThermalSlowdown', true], [0x80, 'HwPowerBrakeSlowdown', true], [0x100, 'DisplayClockSetting', false],
];

export function decodeReasons(mask) {
  return CLOCK_REASONS.filter(([bit]) => Math.floor(mask / bit) % 2 === 1)
    .map(([, name, bad]) => ({name, bad}));
}

const rate = '[1m]';

export function panels(E, G) {
  const reasons = `llm:gpu_clock_event_reasons{${G}}`;
  return [
    {row: 'Overview'},
    {id: 'variants', kind: 'variants', title: 'Per variant (now)', wide: true,
      desc: 'One row per variant: the worst replica of each.'},
    {id: 'req', kind: 'ts', title: 'Requests/s', unit: 'reqps',
      desc: 'Gateway requests (ingress-nginx) and finished requests per engine.',
      q: [[`sum(rate(nginx_ingress_controller_requests${rate}))`, 'gateway'],
        [`sum by (job) (rate(vllm:request_success_total{${E}}${rate}))`, '{{job}} finished'],
        [`sum by (job) (rate(sglang:num_requests_total{${E}}${rate}))`, '{{job}} finished']]},
    {id: 'ttft', kind: 'ts', title: 'TTFT p95 / p99', unit: 's',
      desc: 'Time to first token per engine target. Red band: TTFTBreach (p99 > 2s for 10m).',
      q: [[`llm:ttft_p99:5m{${E}}`, 'p99 {{instance}}'], [`llm:ttft_p95:5m{${E}}`, 'p95 {{instance}}']],
      bands: [{from: T.TTFT_P99_CRIT, color: RED}]},
    {id: 'tpot', kind: 'ts', title: 'TPOT p95', unit: 's',
      desc: 'Inter-token latency p95 per engine target. Orange band: TPOTBreach.',
      q: [[`llm:tpot_p95:5m{${E}}`, '{{instance}}']], bands: [{from: T.TPOT_P95_WARN, color: ORANGE}]},
    {id: '5xx', kind: 'ts', title: 'Gateway 5xx share', unit: 'percentunit',
      desc: '5xx responses / all responses at the gateway. Red band: Gateway5xx (> 1% for 5m). No data until a 5xx is answered.',
      q: [[`sum(rate(nginx_ingress_controller_requests{status=~"5.."}${rate})) / sum(rate(nginx_ingress_controller_requests${rate}))`, '5xx share']],
      bands: [{from: T.GATEWAY_5XX_CRIT, color: RED}]},
    {row: 'Engine'},
    {id: 'runwait', kind: 'ts', title: 'Running vs waiting requests',
      desc: 'Running: requests in the batch. Waiting: llm:queue_max:1m; bands at QueueBuildup (4) and QueueBuildupCritical (16).',
      q: [[`sum by (job, instance) (vllm:num_requests_running{${E}}) or sum by (job, instance) (sglang:num_running_reqs{${E}})`, 'running {{instance}}'],
        [`llm:queue_max:1m{${E}}`, 'waiting {{instance}}']],
      bands: [{from: T.QUEUE_WARN, to: T.QUEUE_CRIT, color: ORANGE}, {from: T.QUEUE_CRIT, color: RED}]},
    {id: 'kv', kind: 'ts', title: 'KV-cache usage', unit: 'percentunit', min: 0, max: 1,
      desc: 'llm:kv_usage:1m per engine target. Bands at KVCacheHigh (0.85) and KVCacheCritical (0.97).',
      q: [[`llm:kv_usage:1m{${E}}`, '{{instance}}']],
      bands: [{from: T.KV_WARN, to: T.KV_CRIT, color: ORANGE}, {from: T.KV_CRIT, color: RED}]},
    {id: 'tps', kind: 'ts', title: 'Token throughput in / out', unit: 'short',
      desc: 'Prompt (prefill) and generated tokens per second per target (llm:in_tps:5m, llm:out_tps:5m).',
      q: [[`llm:in_tps:5m{${E}}`, 'prompt {{instance}}'], [`llm:out_tps:5m{${E}}`, 'generated {{instance}}']]},
    {id: 'prefix', kind: 'ts', title: 'Prefix-cache hit rate', unit: 'percentunit', min: 0, max: 1,
      desc: 'vLLM V1: hit tokens / queried tokens; SGLang: sglang:cache_hit_rate. A collapse: template change or pool exhausted.',
      q: [[`sum by (job, instance) (rate(vllm:prefix_cache_hits_total{${E}}${rate})) / sum by (job, instance) (rate(vllm:prefix_cache_queries_total{${E}}${rate})) or max by (job, instance) (sglang:cache_hit_rate{${E}})`, '{{instance}}']]},
    {id: 'spec', kind: 'ts', title: 'Speculative decoding acceptance', unit: 'percentunit', min: 0, max: 1,
      desc: 'Accepted / proposed draft tokens (vLLM V1; SGLang sglang:spec_accept_rate). Empty without speculative decoding.',
      q: [[`sum by (job, instance) (rate(vllm:spec_decode_num_accepted_tokens_total{${E}}${rate})) / sum by (job, instance) (rate(vllm:spec_decode_num_draft_tokens_total{${E}}${rate})) or max by (job, instance) (sglang:spec_accept_rate{${E}})`, '{{instance}}']]},
    {id: 'preempt', kind: 'ts', title: 'Preemptions/s',
      desc: 'vLLM requests preempted for lack of KV cache (llm:preemptions:rate5m).',
      q: [[`llm:preemptions:rate5m{${E}}`, '{{instance}}']], bands: [{from: 0.001, color: ORANGE}]},
    {row: 'GPU'},
    {id: 'util', kind: 'heat', title: 'GPU utilisation per GPU', unit: 'percent', wide: true,
      desc: 'DCGM_FI_DEV_GPU_UTIL (0-100 %), one row per GPU.',
      q: [[`DCGM_FI_DEV_GPU_UTIL{${G}}`, '{{instance}} GPU {{gpu}}']]},
    {id: 'mem', kind: 'ts', title: 'GPU memory used', unit: 'mbytes',
      desc: 'Frame buffer in use per GPU (DCGM_FI_DEV_FB_USED, MiB).',
      q: [[`DCGM_FI_DEV_FB_USED{${G}}`, '{{instance}} GPU {{gpu}}']]},
    {id: 'temp', kind: 'ts', title: 'GPU temperature', unit: 'celsius',
      desc: 'DCGM_FI_DEV_GPU_TEMP per GPU. Orange band: GPUTempHigh (> 85 C for 5m).',
      q: [[`DCGM_FI_DEV_GPU_TEMP{${G}}`, '{{instance}} GPU {{gpu}}']], bands: [{from: T.GPU_TEMP_WARN, color: ORANGE}]},
    {id: 'power', kind: 'ts', title: 'GPU power', unit: 'watt',
      desc: 'DCGM_FI_DEV_POWER_USAGE per GPU.',
      q: [[`DCGM_FI_DEV_POWER_USAGE{${G}}`, '{{instance}} GPU {{gpu}}']]},
    {id: 'throttle', kind: 'ts', title: 'Clock slowdown bits (thermal / hardware)',
      desc: 'HwSlowdown, SwThermal, HwThermal and HwPowerBrake bits set in llm:gpu_clock_event_reasons, per GPU. Above zero for 10m: GpuThrottling.',
      q: [[[8, 32, 64, 128].map((b) => `floor(${reasons} / ${b}) % 2`).join(' + '), '{{instance}} GPU {{gpu}}']],
      bands: [{from: 1, color: ORANGE}]},
    {id: 'reasons', kind: 'throttle', title: 'Clock event reasons now (decoded)',
      desc: 'The bitmask of each GPU decoded; slowdown reasons in red.',
      q: [[reasons, '{{instance}} GPU {{gpu}}']]},
    {id: 'ecc', kind: 'ts', title: 'ECC double-bit errors (last hour)', red: true,
      desc: 'llm:ecc_dbe_inc_1h per GPU; above zero is EccDoubleBitError (drain the node). Empty when the ECC counters are not enabled.',
      q: [[`llm:ecc_dbe_inc_1h{${G}}`, '{{instance}} GPU {{gpu}}']], bands: [{from: 0.001, color: RED}]},
    {id: 'xid', kind: 'table', title: 'XID (last code per GPU)', red: (v) => v !== 0, decimals: 0, quiet: 0,
      desc: 'DCGM_FI_DEV_XID_ERRORS holds the last XID code, not a count. Non-zero is XidError: dmesg | grep NVRM.',
      q: [[`max by (instance, gpu) (DCGM_FI_DEV_XID_ERRORS{${G}})`, '{{instance}} GPU {{gpu}}']]},
    {row: 'Capacity'},
    {id: 'headroom', kind: 'ts', title: 'KV-cache headroom (1 − usage)', unit: 'percentunit', min: 0, max: 1,
      desc: '1 - llm:kv_usage:1m per engine target. Below 0.2 highlighted; below 0.03 KVCacheCritical.',
      q: [[`1 - llm:kv_usage:1m{${E}}`, '{{instance}}']],
      bands: [{from: 0, to: 1 - T.KV_CRIT, color: RED}, {from: 1 - T.KV_CRIT, to: T.HEADROOM_LOW, color: ORANGE}]},
    {id: 'headroom-now', kind: 'table', title: 'Least headroom per target', unit: 'percentunit',
      red: (v) => v < T.HEADROOM_LOW, desc: 'Below 0.2 in red.',
      q: [[`sort(1 - llm:kv_usage:1m{${E}})`, '{{instance}} ({{variant}})']]},
    {id: 'tps-gpu', kind: 'ts', title: 'Generated tokens/s per GPU, by variant',
      desc: 'sum of llm:out_tps:5m over the GPUs dcgm-exporter reports for the variant.',
      q: [[`sum by (variant) (llm:out_tps:5m{${E}}) / count by (variant) (DCGM_FI_DEV_GPU_UTIL{${G}})`, '{{variant}}']]},
    {row: 'Data freshness'},
    {id: 'down', kind: 'stat', title: 'Targets down', red: (v) => v > 0, decimals: 0,
      desc: 'Scrape targets whose last scrape failed (up == 0).',
      q: [['count(up == 0) or vector(0)', 'down']]},
    {id: 'rules-age', kind: 'stat', title: 'llm:* rules age', unit: 's', red: (v, iv) => v > 2 * iv,
      desc: 'Seconds since the newest llm:kv_usage:1m sample.',
      q: [['time() - max(timestamp(llm:kv_usage:1m))', 'age']]},
    {id: 'fresh', kind: 'table', title: 'Seconds since last scrape, per target', unit: 's', wide: true,
      red: (v, iv) => v > 2 * iv, desc: 'Over two scrape intervals in red: Vigil is not scraping that target.',
      q: [['sort_desc(time() - timestamp(up))', '{{job}} {{instance}}']], extraLabel: 'up'},
  ];
}

#!/usr/bin/env python3
"""Writes llm-inference.json, the Grafana dashboard of the LLM rule pack.

  python3 examples/llm/grafana/build_dashboard.py > examples/llm/grafana/llm-inference.json

The JSON is what Grafana imports; this script is where it is edited, so that
the panels stay short to read and the thresholds stay next to the alerts
they mirror. tests/server/grafana_dashboard_test.cc checks that the JSON is
this script's output, that every query parses, that every llm:* name is one
rules/recording.yml records and that the threshold bands sit at the alert
thresholds of rules/alerts.yml. Standard library only.
"""
import json
import sys

DS = {"type": "prometheus", "uid": "${datasource}"}

# Label filters of the dashboard variables. The llm:* rules keep
# `framework`, `variant`, `job`, `instance` and `model_name`; the GPU hosts'
# exporters carry `framework` and `variant` from prometheus.yml.
ENG = 'framework=~"$framework", variant=~"$variant", instance=~"$instance"'
GPU = 'framework=~"$framework", variant=~"$variant"'

# Alert thresholds of rules/alerts.yml (warning, critical).
KV_WARN, KV_CRIT = 0.85, 0.97          # KVCacheHigh, KVCacheCritical
QUEUE_WARN, QUEUE_CRIT = 4, 16         # QueueBuildup, QueueBuildupCritical
TTFT_P99_CRIT = 2                      # TTFTBreach (seconds)
TPOT_P95_WARN = 0.1                    # TPOTBreach (seconds)
GPU_TEMP_WARN = 85                     # GPUTempHigh (degrees C)
GATEWAY_5XX_CRIT = 0.01                # Gateway5xx (share)
SCRAPE_INTERVAL = 15                   # prometheus.yml global.scrape_interval


def steps(*pairs):
    """Threshold steps: base colour, then (value, colour) from low to high."""
    out = [{"color": pairs[0], "value": None}]
    out += [{"color": c, "value": v} for v, c in pairs[1:]]
    return {"mode": "absolute", "steps": out}


def target(expr, legend="", instant=False, ref="A"):
    t = {"datasource": DS, "refId": ref, "expr": expr,
         "legendFormat": legend or "__auto", "range": not instant,
         "instant": instant}
    if instant:
        t["format"] = "time_series"
    return t


def targets(*specs, instant=False):
    return [target(e, l, instant, chr(ord("A") + i))
            for i, (e, l) in enumerate(specs)]


class Layout:
    """Places panels left to right on Grafana's 24-column grid."""

    def __init__(self):
        self.panels, self.x, self.y, self.row_h, self.next_id = [], 0, 0, 0, 1

    def _id(self):
        self.next_id += 1
        return self.next_id - 1

    def row(self, title):
        self._wrap()
        self.panels.append({"type": "row", "title": title, "id": self._id(),
                            "collapsed": False, "panels": [],
                            "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y}})
        self.y += 1

    def _wrap(self):
        if self.x:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0

    def add(self, panel, w, h=8):
        if self.x + w > 24:
            self._wrap()
        panel["id"] = self._id()
        panel["gridPos"] = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.panels.append(panel)
        self.x += w
        self.row_h = max(self.row_h, h)


def timeseries(title, desc, tgts, unit="short", thresholds=None, lo=None,
               hi=None):
    defaults = {"unit": unit, "custom": {
        "drawStyle": "line", "lineWidth": 1, "fillOpacity": 0,
        "showPoints": "never", "spanNulls": False,
        "thresholdsStyle": {"mode": "dashed" if thresholds else "off"}}}
    defaults["color"] = {"mode": "palette-classic"}
    defaults["thresholds"] = thresholds or steps("green")
    if lo is not None:
        defaults["min"] = lo
    if hi is not None:
        defaults["max"] = hi
    return {"type": "timeseries", "title": title, "description": desc,
            "datasource": DS, "targets": tgts,
            "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom",
                                   "showLegend": True},
                        "tooltip": {"mode": "multi", "sort": "desc"}}}


def stat(title, desc, tgts, unit="short", thresholds=None, decimals=None):
    defaults = {"unit": unit, "color": {"mode": "thresholds"},
                "thresholds": thresholds or steps("green")}
    if decimals is not None:
        defaults["decimals"] = decimals
    return {"type": "stat", "title": title, "description": desc,
            "datasource": DS, "targets": tgts,
            "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"],
                                          "fields": "", "values": False},
                        "colorMode": "background", "graphMode": "area",
                        "justifyMode": "auto", "orientation": "auto",
                        "textMode": "auto"}}


def bargauge(title, desc, tgts, unit="short", thresholds=None):
    return {"type": "bargauge", "title": title, "description": desc,
            "datasource": DS, "targets": tgts,
            "fieldConfig": {"defaults": {
                "unit": unit, "color": {"mode": "thresholds"},
                "thresholds": thresholds or steps("green")}, "overrides": []},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"],
                                          "fields": "", "values": False},
                        "displayMode": "basic", "orientation": "horizontal",
                        "showUnfilled": True}}


def heatmap(title, desc, tgts, unit):
    # calculate=false: each series (one per GPU) is one row of cells, the
    # colour is its value; Grafana does not bucket the values itself.
    return {"type": "heatmap", "title": title, "description": desc,
            "datasource": DS, "targets": tgts,
            "fieldConfig": {"defaults": {"custom": {"hideFrom": {
                "legend": False, "tooltip": False, "viz": False}}},
                "overrides": []},
            "options": {"calculate": False, "cellGap": 1,
                        "cellValues": {"unit": unit},
                        "color": {"mode": "scheme", "scheme": "Turbo",
                                  "steps": 64, "fill": "dark", "min": 0,
                                  "max": 100, "exponent": 0.5,
                                  "reverse": False},
                        "rowsFrame": {"layout": "auto"},
                        "yAxis": {"axisPlacement": "left", "reverse": False},
                        "legend": {"show": True},
                        "tooltip": {"mode": "single", "yHistogram": False,
                                    "showColorScale": True},
                        "showValue": "never",
                        "exemplars": {"color": "rgba(255,0,255,0.7)"}}}


def freshness_row(d):
    d.row("Data freshness and Vigil itself")
    age = steps("green", (2 * SCRAPE_INTERVAL, "orange"),
                (4 * SCRAPE_INTERVAL, "red"))
    d.add(stat("Targets down",
               "Scrape targets whose last scrape failed (up == 0). "
               "LLMEngineDown / ScrapeDown fire after 3m / 5m.",
               targets(("count(up == 0) or vector(0)", "down")),
               thresholds=steps("green", (1, "red"))), 4)
    d.add(stat("Oldest scrape",
               "Seconds since the least recent successful or failed scrape "
               "of any target. Over two scrape intervals: Vigil is not "
               "scraping (overloaded, stopped, or this data source points "
               "elsewhere).",
               targets(("max(time() - timestamp(up))", "age")), unit="s",
               thresholds=age, decimals=0), 4)
    d.add(bargauge("Seconds since last scrape, by job", "",
                   targets(("max by (job) (time() - timestamp(up))",
                            "{{job}}"), instant=True),
                   unit="s", thresholds=age), 8)
    d.add(stat("llm:* rules age",
               "Seconds since the newest llm:kv_usage:1m sample (one of the "
               "llm-recording group, which runs every 15s). If this grows, "
               "the engine panels and the capacity alerts read old data. "
               "(Not {__name__=~\"llm:.+\"}: timestamp() drops the names, "
               "and rules with the same labels then collide.)",
               targets(("time() - max(timestamp(llm:kv_usage:1m))", "age")),
               unit="s", thresholds=age, decimals=0), 4)
    d.add(timeseries(
        "Vigil: rule failures, notification errors",
        "Per second. Rule evaluation failures mean some llm:* series or "
        "alerts are missing; notification errors / drops mean alerts do not "
        "reach Alertmanager.",
        targets(('sum(rate(prometheus_rule_evaluation_failures_total{job="vigil"}[$__rate_interval]))', "rule failures"),
                ('sum(rate(prometheus_notifications_errors_total{job="vigil"}[$__rate_interval]))', "notify errors"),
                ('sum(rate(prometheus_notifications_dropped_total{job="vigil"}[$__rate_interval]))', "notify dropped")),
        unit="ops", lo=0), 4)


def overview_row(d):
    d.row("Overview")
    d.add(timeseries(
        "Requests/s",
        "Gateway requests (ingress-nginx) and finished requests per engine.",
        targets(("sum(rate(nginx_ingress_controller_requests[$__rate_interval]))", "gateway"),
                (f"sum by (job) (rate(vllm:request_success_total{{{ENG}}}[$__rate_interval]))", "{{job}} finished"),
                (f"sum by (job) (rate(sglang:num_requests_total{{{ENG}}}[$__rate_interval]))", "{{job}} finished")),
        unit="reqps", lo=0), 6)
    d.add(timeseries(
        "TTFT p95 / p99",
        "Time to first token per engine target (llm:ttft_p95:5m, "
        "llm:ttft_p99:5m). Red line: TTFTBreach (p99 > 2s for 10m).",
        targets((f"llm:ttft_p99:5m{{{ENG}}}", "p99 {{instance}}"),
                (f"llm:ttft_p95:5m{{{ENG}}}", "p95 {{instance}}")),
        unit="s", lo=0, thresholds=steps("green", (TTFT_P99_CRIT, "red"))), 6)
    d.add(timeseries(
        "TPOT p95",
        "Inter-token latency p95 per engine target (llm:tpot_p95:5m). "
        "Orange line: TPOTBreach (> 100ms for 10m).",
        targets((f"llm:tpot_p95:5m{{{ENG}}}", "{{instance}}")),
        unit="s", lo=0, thresholds=steps("green", (TPOT_P95_WARN, "orange"))), 6)
    d.add(timeseries(
        "Gateway 5xx share",
        "5xx responses / all responses at the gateway. Red line: Gateway5xx "
        "(> 1% for 5m). No data without traffic.",
        targets(('sum(rate(nginx_ingress_controller_requests{status=~"5.."}[$__rate_interval]))'
                 " / sum(rate(nginx_ingress_controller_requests[$__rate_interval]))", "5xx share")),
        unit="percentunit", lo=0,
        thresholds=steps("green", (GATEWAY_5XX_CRIT, "red"))), 6)
    d.add(stat("Output tokens/s", "Generated tokens per second, all "
               "selected engines (sum of llm:out_tps:5m).",
               targets((f"sum(llm:out_tps:5m{{{ENG}}})", "tokens/s"))), 6)
    d.add(stat("Worst TTFT p99", "Highest llm:ttft_p99:5m of the selected "
               "engines.",
               targets((f"max(llm:ttft_p99:5m{{{ENG}}})", "p99")), unit="s",
               thresholds=steps("green", (TTFT_P99_CRIT, "red"))), 6)
    d.add(stat("Fullest KV cache", "Highest llm:kv_usage:1m of the selected "
               "engines: one full replica preempts while the fleet average "
               "looks fine.",
               targets((f"max(llm:kv_usage:1m{{{ENG}}})", "KV")),
               unit="percentunit",
               thresholds=steps("green", (KV_WARN, "orange"),
                                (KV_CRIT, "red"))), 6)
    d.add(stat("Longest queue", "Highest llm:queue_max:1m (requests "
               "waiting) of the selected engines.",
               targets((f"max(llm:queue_max:1m{{{ENG}}})", "waiting")),
               thresholds=steps("green", (QUEUE_WARN, "orange"),
                                (QUEUE_CRIT, "red"))), 6)


def engine_row(d):
    d.row("Engine")
    d.add(timeseries(
        "Running and waiting requests",
        "Running: requests in the batch (no recording rule). Waiting: "
        "llm:queue_max:1m; lines at QueueBuildup (4) and "
        "QueueBuildupCritical (16).",
        targets((f"sum by (job, instance) (vllm:num_requests_running{{{ENG}}})"
                 f" or sum by (job, instance) (sglang:num_running_reqs{{{ENG}}})", "running {{instance}}"),
                (f"llm:queue_max:1m{{{ENG}}}", "waiting {{instance}}")),
        lo=0, thresholds=steps("green", (QUEUE_WARN, "orange"),
                               (QUEUE_CRIT, "red"))), 8)
    d.add(timeseries(
        "KV-cache usage",
        "llm:kv_usage:1m per engine target (fullest engine of a target). "
        "Lines at KVCacheHigh (0.85) and KVCacheCritical (0.97).",
        targets((f"llm:kv_usage:1m{{{ENG}}}", "{{instance}}")),
        unit="percentunit", lo=0, hi=1,
        thresholds=steps("green", (KV_WARN, "orange"), (KV_CRIT, "red"))), 8)
    d.add(timeseries(
        "Token throughput",
        "Prompt (prefill) and generated tokens per second per target "
        "(llm:in_tps:5m, llm:out_tps:5m).",
        targets((f"llm:in_tps:5m{{{ENG}}}", "prompt {{instance}}"),
                (f"llm:out_tps:5m{{{ENG}}}", "generated {{instance}}")),
        lo=0), 8)
    d.add(timeseries(
        "Prefix-cache hit rate",
        "vLLM V1: hit tokens / queried tokens; SGLang: sglang:cache_hit_rate.",
        targets((f"sum by (job, instance) (rate(vllm:prefix_cache_hits_total{{{ENG}}}[$__rate_interval]))"
                 f" / sum by (job, instance) (rate(vllm:prefix_cache_queries_total{{{ENG}}}[$__rate_interval]))"
                 f" or max by (job, instance) (sglang:cache_hit_rate{{{ENG}}})", "{{instance}}")),
        unit="percentunit", lo=0, hi=1), 8)
    d.add(timeseries(
        "Preemptions/s",
        "vLLM requests preempted for lack of KV cache (llm:preemptions:rate5m);"
        " above zero together with KVCacheCritical = KV saturation.",
        targets((f"llm:preemptions:rate5m{{{ENG}}}", "{{instance}}")),
        lo=0, thresholds=steps("green", (0.001, "orange"))), 8)
    d.add(timeseries(
        "Speculative decoding acceptance",
        "Accepted / proposed draft tokens (vLLM V1 counters; SGLang's "
        "sglang:spec_accept_rate). Empty without speculative decoding.",
        targets((f"sum by (job, instance) (rate(vllm:spec_decode_num_accepted_tokens_total{{{ENG}}}[$__rate_interval]))"
                 f" / sum by (job, instance) (rate(vllm:spec_decode_num_draft_tokens_total{{{ENG}}}[$__rate_interval]))"
                 f" or max by (job, instance) (sglang:spec_accept_rate{{{ENG}}})", "{{instance}}")),
        unit="percentunit", lo=0, hi=1), 8)


def gpu_row(d):
    d.row("GPU")
    d.add(heatmap(
        "GPU utilisation per GPU",
        "DCGM_FI_DEV_GPU_UTIL (0-100 %), one row per GPU. 100 % only says "
        "the GPU is busy; read it with throughput and latency. MIG instances "
        "report no utilisation.",
        targets((f"DCGM_FI_DEV_GPU_UTIL{{{GPU}}}", "{{instance}} GPU {{gpu}}")),
        "percent"), 24, 10)
    d.add(timeseries(
        "Hottest GPU per host",
        "llm:gpu_temp_max:1m of the dcgm-exporter targets that match the "
        "filters. Orange line: GPUTempHigh (any GPU > 85 C for 5m).",
        targets((f"llm:gpu_temp_max:1m{{{GPU}}}", "{{instance}}")),
        unit="celsius", thresholds=steps("green", (GPU_TEMP_WARN, "orange"))), 8)
    d.add(timeseries(
        "GPU memory used",
        "Frame buffer in use per GPU (DCGM_FI_DEV_FB_USED, MiB). vLLM "
        "reserves most of it up front, so this is flat while serving.",
        targets((f"DCGM_FI_DEV_FB_USED{{{GPU}}}", "{{instance}} GPU {{gpu}}")),
        unit="mbytes", lo=0), 8)
    d.add(timeseries(
        "GPU power",
        "DCGM_FI_DEV_POWER_USAGE per GPU, watts.",
        targets((f"DCGM_FI_DEV_POWER_USAGE{{{GPU}}}", "{{instance}} GPU {{gpu}}")),
        unit="watt", lo=0), 8)
    reasons = f"llm:gpu_clock_event_reasons{{{GPU}}}"
    d.add(timeseries(
        "Clock slowdown (thermal / hardware)",
        "Number of the HwSlowdown, SwThermal, HwThermal and HwPowerBrake bits "
        "set in the clock-event bitmask (llm:gpu_clock_event_reasons), per "
        "GPU. Idle and software power-cap bits are normal and not counted. "
        "Above zero for 10m: GpuThrottling.",
        targets((" + ".join(f"floor({reasons} / {b}) % 2" for b in (8, 32, 64, 128)),
                 "{{instance}} GPU {{gpu}}")),
        lo=0, thresholds=steps("green", (1, "orange"))), 8)
    d.add(timeseries(
        "ECC double-bit errors (last hour)",
        "llm:ecc_dbe_inc_1h per GPU; any value above zero is EccDoubleBitError "
        "(drain the node). Empty when dcgm-exporter's CSV does not enable the "
        "ECC counters (alert EccMetricsMissing).",
        targets((f"llm:ecc_dbe_inc_1h{{{GPU}}}", "{{instance}} GPU {{gpu}}")),
        lo=0, thresholds=steps("green", (0.001, "red"))), 8)
    d.add(stat(
        "XID (last code)",
        "DCGM_FI_DEV_XID_ERRORS holds the code of the last XID, not a count. "
        "Non-zero is XidError: dmesg | grep NVRM on that host.",
        targets((f"max by (instance, gpu) (DCGM_FI_DEV_XID_ERRORS{{{GPU}}})",
                 "{{instance}} GPU {{gpu}}")),
        thresholds=steps("green", (1, "red")), decimals=0), 8)


def capacity_row(d):
    d.row("Capacity")
    headroom = steps("red", (round(1 - KV_CRIT, 6), "orange"),
                     (round(1 - KV_WARN, 6), "green"))
    d.add(timeseries(
        "KV-cache headroom",
        "1 - llm:kv_usage:1m per engine target. Below 0.15 KVCacheHigh, below "
        "0.03 KVCacheCritical. Rising usage with a normal p99 is the time to "
        "plan capacity.",
        targets((f"1 - llm:kv_usage:1m{{{ENG}}}", "{{instance}}")),
        unit="percentunit", lo=0, hi=1, thresholds=headroom), 8)
    d.add(stat("Least KV headroom", "",
               targets((f"min(1 - llm:kv_usage:1m{{{ENG}}})", "headroom")),
               unit="percentunit", thresholds=headroom), 4)
    d.add(timeseries(
        "Generated tokens/s per GPU, by variant",
        "sum of llm:out_tps:5m over the GPUs dcgm-exporter reports for the "
        "variant (needs the variant label on both, as in prometheus.yml).",
        targets(('sum by (variant) (llm:out_tps:5m{framework=~"$framework", variant=~"$variant"})'
                 f" / count by (variant) (DCGM_FI_DEV_GPU_UTIL{{{GPU}}})", "{{variant}}")),
        lo=0), 6)
    d.add(timeseries(
        "Series in Vigil's head",
        "prometheus_tsdb_head_series of the vigil job. A jump after a change "
        "means a high-cardinality label (user, session, model path).",
        targets(('prometheus_tsdb_head_series{job="vigil"}', "series")),
        lo=0), 6)
    d.add(bargauge(
        "Top 20 metrics by series",
        "The cardinality audit: series per metric name. Drop what nobody "
        "reads with metric_relabel_configs.",
        targets(('topk(20, count by (__name__) ({__name__=~".+"}))',
                 "{{__name__}}"), instant=True)), 24, 10)


def variable(name, label, query, desc):
    return {"type": "query", "name": name, "label": label,
            "description": desc, "datasource": DS,
            "definition": query,
            "query": {"qryType": 1, "query": query,
                      "refId": "PrometheusVariableQueryEditor-VariableQuery"},
            "refresh": 2, "multi": True, "includeAll": True,
            "allValue": ".*", "sort": 1, "regex": "", "hide": 0,
            "current": {"selected": True, "text": ["All"],
                        "value": ["$__all"]},
            "options": []}


def templating():
    return {"list": [
        {"type": "datasource", "name": "datasource", "label": "Data source",
         "query": "prometheus", "refresh": 1, "regex": "", "hide": 0,
         "current": {}, "options": []},
        variable("framework", "Framework",
                 'label_values(up{service="llm-inference"}, framework)',
                 "Engine (vllm, sglang, trtllm), from prometheus.yml."),
        variable("variant", "Variant",
                 'label_values(up{service="llm-inference", framework=~"$framework"}, variant)',
                 "Model and quantisation, from prometheus.yml."),
        variable("instance", "Instance",
                 'label_values(up{service="llm-inference", framework=~"$framework", variant=~"$variant"}, instance)',
                 "Engine targets (filters the engine panels)."),
    ]}


def dashboard():
    d = Layout()
    freshness_row(d)
    overview_row(d)
    engine_row(d)
    gpu_row(d)
    capacity_row(d)
    return {
        "__requires": [
            {"type": "grafana", "id": "grafana", "name": "Grafana",
             "version": "10.0.0"},
            {"type": "datasource", "id": "prometheus", "name": "Prometheus",
             "version": "1.0.0"}],
        "annotations": {"list": [
            {"builtIn": 1, "datasource": {"type": "grafana",
                                          "uid": "-- Grafana --"},
             "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
             "name": "Annotations & Alerts", "type": "dashboard"},
            {"datasource": DS, "enable": True, "hide": False,
             "iconColor": "red", "name": "Critical alerts",
             "expr": 'ALERTS{alertstate="firing", severity="critical"}',
             "step": "60s", "titleFormat": "{{alertname}}",
             "textFormat": "{{job}} {{instance}}", "tagKeys": "severity",
             "useValueForTime": False}]},
        "description": "LLM inference on GPUs (vLLM, SGLang, TRT-LLM, "
                       "dcgm-exporter, ingress-nginx), built on the llm:* "
                       "recording rules of Vigil's examples/llm rule pack.",
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "id": None,
        "links": [],
        "liveNow": False,
        "panels": d.panels,
        "refresh": "30s",
        "schemaVersion": 39,
        "tags": ["llm", "gpu", "vigil"],
        "templating": templating(),
        "time": {"from": "now-3h", "to": "now"},
        "timepicker": {},
        "timezone": "browser",
        "title": "LLM inference",
        "uid": "vigil-llm-inference",
        "version": 1,
        "weekStart": "",
    }


if __name__ == "__main__":
    json.dump(dashboard(), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")

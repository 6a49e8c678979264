#!/usr/bin/env python3
"""The queries bench/compare/run.sh times, one per line: KIND<TAB>ID<TAB>PROMQL.

KIND is `instant` for the ten key queries of the seed's section 5.5
(/work/shared/seeds/001_*.txt, "PromQL 关键查询验证清单"; summarised in
llm-monitoring.md, "Queries users run") and `range` for the expression of
every `llm:*` recording rule of the rule pack, timed as a 1-hour range
query.

The seed tells users to replace its metric names by the ones their engines
really expose (its section 5.1), so two of the ten use the real names the
simulator serves, as the rule pack does: `vllm:num_generation_tokens` does not
exist on any vLLM release (the counter is `vllm:generation_tokens_total`), and
`vllm:gpu_cache_usage_perc` is the V0 name (V1, most of the simulated fleet,
calls it `vllm:kv_cache_usage_perc`; both are queried, with `or`).

    python3 bench/compare/queries.py examples/llm/rules/recording.yml
"""
import sys

import yaml

KEY_QUERIES = [
    ("k01_up", "up"),
    ("k02_out_tps", "sum(rate(vllm:generation_tokens_total[5m]))"),
    ("k03_ttft_p99",
     "histogram_quantile(0.99, sum(rate("
     "vllm:time_to_first_token_seconds_bucket[5m])) by (le))"),
    ("k04_kv_usage",
     "avg by (instance) (vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc)"),
    ("k05_queue", "max(vllm:num_requests_waiting)"),
    ("k06_gpu_util", "DCGM_FI_DEV_GPU_UTIL"),
    ("k07_gpu_temp", "max(DCGM_FI_DEV_GPU_TEMP)"),
    ("k08_ecc_dbe", "max(DCGM_FI_DEV_ECC_DBE_AGG_TOTAL)"),
    ("k09_sglang_hit", "sglang:cache_hit_rate"),
    ("k10_gw_5xx",
     'sum(rate(nginx_ingress_controller_requests{status=~"5.."}[5m])) / '
     "sum(rate(nginx_ingress_controller_requests[5m]))"),
]


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: queries.py RECORDING_RULES_YML")
    for qid, q in KEY_QUERIES:
        print(f"instant\t{qid}\t{q}")
    with open(argv[1], encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    n = 0
    for g in doc.get("groups", []):
        for r in g.get("rules", []):
            name = r.get("record", "")
            if not name.startswith("llm:"):
                continue
            expr = " ".join(str(r["expr"]).split())
            print(f"range\t{name}\t{expr}")
            n += 1
    if n == 0:
        sys.exit(f"queries.py: no llm:* recording rule in {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)

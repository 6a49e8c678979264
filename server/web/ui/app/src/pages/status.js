// Status: build, runtime, flags, configuration and the TSDB cardinality
// audit (top metric names, label names and label pairs by series).
import {h, set, fmtTime, section} from '../dom.js';
import {v1} from '../api.js';

function kvTable(obj) {
  return h('table', {class: 'grid kv'}, h('tbody', null, Object.entries(obj || {}).map(([k, v]) =>
    h('tr', null, h('th', null, k), h('td', {class: 'mono'}, typeof v === 'object' ? JSON.stringify(v) : String(v))))));
}

function topTable(id, title, rows, what) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  return h('div', {class: 'top', id},
    h('h3', null, title),
    h('table', {class: 'grid'}, h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', null, what))),
      h('tbody', null, rows.map((r) => h('tr', null, h('td', {class: 'mono'}, r.name),
        h('td', {class: 'num bar', style: {background:
          `linear-gradient(to right, #dde7f6 ${(100 * r.value) / max}%, transparent ${(100 * r.value) / max}%)`}},
        String(r.value)))))));
}

export function render(root) {
  const parts = {
    build: h('div', null, 'Loading…'), runtime: h('div', null, 'Loading…'),
    tsdb: h('div', {id: 'tsdb-status'}, 'Loading…'), flags: h('div', null, 'Loading…'),
    config: h('div', null, 'Loading…'),
  };
  set(root, h('h1', null, 'Status'),
    section('Build', parts.build), section('Runtime', parts.runtime),
    section('TSDB cardinality', parts.tsdb),
    section('Command-line flags', parts.flags, false), section('Configuration', parts.config, false));
  const fill = (key, p, f) => p.then((r) => set(parts[key], f(r.data)))
    .catch((e) => set(parts[key], h('div', {class: 'error'}, e.message)));
  fill('build', v1('/api/v1/status/buildinfo'), kvTable);
  fill('runtime', v1('/api/v1/status/runtimeinfo'), kvTable);
  fill('flags', v1('/api/v1/status/flags'), kvTable);
  fill('config', v1('/api/v1/status/config'), (d) => h('pre', {class: 'config'}, d.yaml));
  fill('tsdb', v1('/api/v1/status/tsdb', {limit: 20}), (d) => [
    h('p', null, `Head: ${d.headStats.numSeries} series, ${d.headStats.chunkCount ?? '-'} chunks, ` +
      `${fmtTime(d.headStats.minTime)} .. ${fmtTime(d.headStats.maxTime)}`),
    h('div', {class: 'tops'},
      topTable('top-metrics', 'Top metric names by series', d.seriesCountByMetricName || [], 'Series'),
      topTable('top-labels', 'Top label names by values', d.labelValueCountByLabelName || [], 'Values'),
      topTable('top-pairs', 'Top label pairs by series', d.seriesCountByLabelValuePair || [], 'Series'),
      topTable('top-memory', 'Label names by memory', d.memoryInBytesByLabelName || [], 'Bytes')),
  ]);
}

// LLM cluster: the board of llm-monitoring.md on the llm:* recording rules,
// per variant and per instance, with the diagnosis of /api/v1/diagnose
// beside the charts.
import {h, set, labelChips} from '../dom.js';
import {v1, query, queryRange, get} from '../api.js';
import {TimeChart, Heatmap, alignMatrix} from '../chart.js';
import {fmtValue, legendName, parseDuration} from '../format.js';
import {panels, decodeReasons, T} from './llm_panels.js';

const SCRAPE_INTERVAL = 15;  // the rules' group interval: staleness unit

function esc(v) {
  return v.replace(/[\\"]/g, (c) => '\\' + c);
}

function readState() {
  const q = new URLSearchParams(location.search);
  return {variant: q.get('variant') || '', instance: q.get('instance') || '', range: q.get('range') || '1h'};
}

function writeState(st) {
  const q = new URLSearchParams();
  if (st.variant) q.set('variant', st.variant);
  if (st.instance) q.set('instance', st.instance);
  q.set('range', st.range);
  history.replaceState(null, '', location.pathname + '?' + q);
}

export function render(root) {
  const st = readState();
  const charts = new Map();  // panel id -> its chart, replaced on refresh
  const boxes = new Map();  // panel id -> {box, body}
  let builtFor = null;  // the filters the panels were laid out for
  let timer = null;
  let gen = 0;  // drops answers of an earlier refresh
  const variantSel = h('select', {id: 'llm-variant'}, h('option', {value: ''}, 'all variants'));
  const instanceSel = h('select', {id: 'llm-instance'}, h('option', {value: ''}, 'all instances'));
  const rangeSel = h('select', {id: 'llm-range'},
    ['15m', '1h', '3h', '6h', '12h', '1d'].map((r) => h('option', {value: r, selected: r === st.range}, r)));
  const auto = h('input', {type: 'checkbox', id: 'llm-auto', checked: true});
  const grid = h('div', {class: 'board', id: 'llm-board'});
  const diag = h('div', {class: 'diagnosis', id: 'llm-diagnosis'}, h('h2', null, 'Diagnosis'), h('p', {class: 'muted'}, 'Loading…'));
  const stamp = h('span', {class: 'muted', id: 'llm-stamp'});
  let engines = [];  // up{service="llm-inference"} label sets

  set(root, h('div', {class: 'boardhead'}, h('h1', null, 'LLM cluster'),
    h('div', {class: 'controls'}, variantSel, instanceSel, h('label', null, 'Range ', rangeSel),
      h('label', null, auto, ' refresh every 30s'), h('button', {onclick: () => refresh()}, 'Refresh'), stamp)),
  h('div', {class: 'boardwrap'}, grid, diag));

  function filters() {
    const e = [];
    const g = [];
    if (st.variant) {
      e.push(`variant="${esc(st.variant)}"`);
      g.push(`variant="${esc(st.variant)}"`);
    }
    if (st.instance) {
      e.push(`instance="${esc(st.instance)}"`);
      const eng = engines.find((m) => m.instance === st.instance);
      if (eng && eng.node) g.push(`node="${esc(eng.node)}"`);
    }
    return [e.join(', '), g.join(', ')];
  }

  function fillSelectors() {
    const variants = [...new Set(engines.map((m) => m.variant).filter(Boolean))].sort();
    set(variantSel, h('option', {value: ''}, 'all variants'),
      variants.map((v) => h('option', {value: v, selected: v === st.variant}, v)));
    const insts = engines.filter((m) => !st.variant || m.variant === st.variant).map((m) => m.instance).sort();
    set(instanceSel, h('option', {value: ''}, 'all instances'),
      insts.map((i) => h('option', {value: i, selected: i === st.instance}, i)));
  }

  function panelBox(p) {
    const body = h('div', {class: 'panelbody'});
    const box = h('div', {class: 'panel' + (p.wide ? ' wide' : ''), 'data-panel': p.id, 'data-state': 'loading'},
      h('div', {class: 'paneltitle', title: p.desc || ''}, p.title, h('span', {class: 'help', title: p.desc || ''}, '?')),
      body);
    return {box, body};
  }

  function dropChart(id) {
    const c = charts.get(id);
    if (c) c.destroy();
    charts.delete(id);
  }

  function mark(box, state, text) {
    box.dataset.state = state;
    dropChart(box.dataset.panel);
    if (text) box.querySelector('.panelbody').replaceChildren(h('p', {class: state === 'error' ? 'error' : 'muted nodata'}, text));
  }

  async function drawRange(p, box, body, start, end, step, my) {
    const results = await Promise.all(p.q.map(([expr, legend]) =>
      queryRange(expr, String(start), String(end), String(step)).then((r) => ({result: r.data.result, legend}))));
    if (my !== gen) return;
    const data = alignMatrix(results, start, end, step);
    if (data.series.length === 0) return mark(box, 'empty', 'No data.');
    let chart;
    dropChart(p.id);
    if (p.kind === 'heat') {
      data.series.sort((a, b) => a.name.localeCompare(b.name, undefined, {numeric: true}));
      chart = new Heatmap(body, {unit: p.unit, max: 100});
    } else {
      chart = new TimeChart(body, {unit: p.unit, bands: p.bands, min: p.min, max: p.max, height: 180});
    }
    chart.setData(data);
    charts.set(p.id, chart);
    box.dataset.state = 'data';
    box.dataset.series = String(data.series.length);
  }

  async function drawInstant(p, box, body, my) {
    const results = await Promise.all(p.q.map(([expr, legend]) => query(expr).then((r) => ({r: r.data, legend}))));
    if (my !== gen) return;
    const rows = [];
    for (const {r, legend} of results) {
      const list = r.resultType === 'scalar' ? [{metric: {}, value: r.result}] : r.result;
      for (const s of list) rows.push({name: legendName(legend, s.metric), metric: s.metric, v: parseFloat(s.value[1])});
    }
    if (rows.length === 0) return mark(box, 'empty', 'No data.');
    const isRed = (v) => (typeof p.red === 'function' ? p.red(v, SCRAPE_INTERVAL) : false);
    const fmt = (v) => (p.decimals === 0 ? String(Math.round(v)) : fmtValue(v, p.unit));
    if (p.kind === 'stat') {
      const v = rows[0].v;
      set(body, h('div', {class: 'stat' + (isRed(v) ? ' red' : '')}, fmt(v)));
    } else if (p.kind === 'throttle') {
      // GPUs with a reason first; the quiet ones are only counted.
      const set1 = rows.filter((r) => r.v !== 0);
      const quiet = rows.length - set1.length;
      set(body, h('table', {class: 'grid compact'}, h('tbody', null, set1.map((r) => {
        const rs = decodeReasons(r.v);
        const bad = rs.some((x) => x.bad);
        return h('tr', {class: bad ? 'rowbad' : ''}, h('td', null, r.name),
          h('td', {class: 'mono'}, '0x' + Math.round(r.v).toString(16)),
          h('td', null, rs.map((x) => h('span', {class: 'chip' + (x.bad ? ' chipbad' : '')}, x.name))));
      }))), h('p', {class: 'muted small'}, set1.length === 0 ? `all ${quiet} GPUs: no clock event reason`
        : `${quiet} more GPUs with no reason`));
    } else if (p.id === 'fresh') {
      const up = await query('up').catch(() => null);
      const upBy = new Map();
      if (up) for (const s of up.data.result) upBy.set(`${s.metric.job} ${s.metric.instance}`, s.value[1]);
      set(body, h('table', {class: 'grid compact'}, h('tbody', null, rows.map((r) => {
        const u = upBy.get(r.name);
        return h('tr', {class: isRed(r.v) || u === '0' ? 'rowbad' : ''}, h('td', null, r.name),
          h('td', null, u === '0' ? h('span', {class: 'badge bad'}, 'down') : h('span', {class: 'badge ok'}, 'up')),
          h('td', {class: 'num'}, fmt(r.v)));
      }))));
    } else {
      // p.quiet: rows at that value are only counted (XID 0 on most GPUs).
      const shown = p.quiet === undefined ? rows : rows.filter((r) => r.v !== p.quiet);
      const hidden = rows.length - shown.length;
      set(body, h('table', {class: 'grid compact'}, h('tbody', null, shown.map((r) =>
        h('tr', {class: isRed(r.v) ? 'rowbad' : ''}, h('td', null, r.name), h('td', {class: 'num'}, fmt(r.v)))))),
      hidden ? h('p', {class: 'muted small'}, `${shown.length ? `${hidden} more` : `all ${hidden}`} at ${p.quiet}`) : null);
    }
    box.dataset.state = 'data';
  }

  async function drawVariants(box, body, E, my) {
    const sel = E ? `{${E}}` : '';
    const upSel = `{service="llm-inference"${st.variant ? `, variant="${esc(st.variant)}"` : ''}${st.instance ? `, instance="${esc(st.instance)}"` : ''}}`;
    const cols = [
      ['Engines up', `sum by (variant) (up${upSel})`, (v) => String(v)],
      ['Tokens/s out', `sum by (variant) (llm:out_tps:5m${sel})`, (v) => fmtValue(v)],
      ['TTFT p99 (worst)', `max by (variant) (llm:ttft_p99:5m${sel})`, (v) => fmtValue(v, 's'), (v) => v > T.TTFT_P99_CRIT],
      ['TPOT p95 (worst)', `max by (variant) (llm:tpot_p95:5m${sel})`, (v) => fmtValue(v, 's'), (v) => v > T.TPOT_P95_WARN],
      ['KV usage (fullest)', `max by (variant) (llm:kv_usage:1m${sel})`, (v) => fmtValue(v, 'percentunit'), (v) => v > T.KV_WARN],
      ['Headroom (least)', `min by (variant) (1 - llm:kv_usage:1m${sel})`, (v) => fmtValue(v, 'percentunit'), (v) => v < T.HEADROOM_LOW],
      ['Queue (longest)', `max by (variant) (llm:queue_max:1m${sel})`, (v) => fmtValue(v), (v) => v > T.QUEUE_WARN],
    ];
    const answers = await Promise.all(cols.map(([, q]) => query(q).then((r) => r.data.result).catch(() => [])));
    if (my !== gen) return;
    const variants = new Set();
    const val = answers.map((res) => {
      const m = new Map();
      for (const s of res) {
        variants.add(s.metric.variant || '');
        m.set(s.metric.variant || '', parseFloat(s.value[1]));
      }
      return m;
    });
    if (variants.size === 0) return mark(box, 'empty', 'No engines.');
    set(body, h('table', {class: 'grid compact', id: 'variant-table'},
      h('thead', null, h('tr', null, h('th', null, 'Variant'), cols.map(([t]) => h('th', null, t)))),
      h('tbody', null, [...variants].sort().map((v) => h('tr', null, h('td', null, h('b', null, v || '(none)')),
        cols.map(([, , f, bad], i) => {
          const x = val[i].get(v);
          return h('td', {class: 'num' + (x !== undefined && bad && bad(x) ? ' cellbad' : '')}, x === undefined ? '-' : f(x));
        }))))));
    box.dataset.state = 'data';
  }

  async function drawDiagnosis(end, my) {
    try {
      const j = await get('/api/v1/diagnose', {time: String(end), variant: st.variant || undefined});
      if (my !== gen) return;
      const d = (j && j.data) || {};
      const findings = Array.isArray(d.findings) ? d.findings : [];
      const missing = Array.isArray(d.missing) ? d.missing : [];
      const list = (xs) => (Array.isArray(xs) && xs.length ? h('ul', null, xs.map((x) =>
        h('li', null, typeof x === 'string' ? x : JSON.stringify(x)))) : null);
      set(diag, h('h2', null, 'Diagnosis'),
        findings.length === 0 ? h('p', {class: 'ok', id: 'diag-none'}, 'No finding: the fleet looks healthy.') : null,
        findings.map((f) => h('div', {class: `finding sev-${String(f.severity || 'info')}`},
          h('div', null, h('span', {class: `badge ${f.severity === 'critical' ? 'bad' : f.severity === 'warning' ? 'warn' : 'unk'}`},
            String(f.severity || 'info')), ' ', h('b', null, String(f.cause || 'finding'))),
          h('div', {class: 'muted'}, [f.variant, f.instance].filter(Boolean).map(String).join(' · ')),
          f.summary ? h('p', null, String(f.summary)) : null,
          Array.isArray(f.evidence) && f.evidence.length ? [h('div', {class: 'small'}, 'Evidence'), list(f.evidence)] : null,
          Array.isArray(f.next) && f.next.length ? [h('div', {class: 'small'}, 'Look next at'), list(f.next)] : null)),
        missing.length ? [h('h3', null, 'Missing data'), list(missing)] : null);
    } catch (e) {
      if (my !== gen) return;
      set(diag, h('h2', null, 'Diagnosis'), h('p', {class: 'muted', id: 'diag-unavailable'},
        e.status === 404 ? 'diagnose not available in this build' : `diagnose failed: ${e.message}`));
    }
  }

  async function refresh() {
    const my = ++gen;
    const t0 = performance.now();
    const range = parseDuration(st.range) || 3600;
    const end = Math.floor(Date.now() / 1000);
    const start = end - range;
    const step = Math.max(5, Math.floor(range / 240));
    const [E, G] = filters();
    const jobs = [];
    // A refresh with the same filters redraws each panel in place when its
    // data arrives (no flicker); new filters lay the board out anew.
    const key = JSON.stringify([E, G, st.range]);
    const layout = builtFor !== key;
    if (layout) {
      for (const id of [...charts.keys()]) dropChart(id);
      boxes.clear();
      set(grid);
      builtFor = key;
    }
    let section = null;
    for (const p of panels(E, G)) {
      if (p.row) {
        if (layout) {
          section = h('div', {class: 'boardrow'});
          grid.append(h('h2', {class: 'rowtitle'}, p.row), section);
        }
        continue;
      }
      if (layout) {
        boxes.set(p.id, panelBox(p));
        section.append(boxes.get(p.id).box);
      }
      const {box, body} = boxes.get(p.id);
      const job = p.kind === 'variants' ? drawVariants(box, body, E, my)
        : p.kind === 'ts' || p.kind === 'heat' ? drawRange(p, box, body, start, end, step, my)
          : drawInstant(p, box, body, my);
      jobs.push(job.catch((e) => { if (my === gen) mark(box, 'error', e.message); }));
    }
    jobs.push(drawDiagnosis(end, my));
    await Promise.all(jobs);
    if (my !== gen) return;
    const ms = Math.round(performance.now() - t0);
    stamp.textContent = `updated ${new Date().toLocaleTimeString()} in ${ms} ms`;
    grid.dataset.loadedMs = String(ms);
    grid.dataset.loaded = String(my);
  }

  function changed() {
    st.variant = variantSel.value;
    st.instance = instanceSel.value;
    st.range = rangeSel.value;
    if (st.instance && !engines.some((m) => m.instance === st.instance && (!st.variant || m.variant === st.variant))) {
      st.instance = '';
    }
    writeState(st);
    fillSelectors();
    refresh();
  }
  variantSel.onchange = changed;
  instanceSel.onchange = changed;
  rangeSel.onchange = changed;
  const tick = () => { if (auto.checked && document.visibilityState === 'visible') refresh(); };
  timer = setInterval(tick, 30000);

  writeState(st);
  // The panels start at once; the selectors fill in when the engines are
  // known (the GPU filter of one instance needs its node).
  v1('/api/v1/series', {'match[]': 'up{service="llm-inference"}', start: String(Date.now() / 1000 - 3600)})
    .then((r) => {
      engines = r.data;
      fillSelectors();
      if (st.instance) refresh();
    }).catch(() => {});
  refresh();
  return () => {
    clearInterval(timer);
    gen++;
    for (const id of [...charts.keys()]) dropChart(id);
  };
}

export {labelChips};

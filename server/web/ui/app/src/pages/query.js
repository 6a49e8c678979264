// Query: the PromQL editor, an instant table and a range graph. The whole
// view lives in the URL's query string, so a copied link reproduces it.
import {h, set, labelsText} from '../dom.js';
import {query, queryRange} from '../api.js';
import {TimeChart, alignMatrix} from '../chart.js';
import {parseDuration, fmtDurationShort, fmtValue} from '../format.js';

const TABLE_ROWS = 1000;

function readState() {
  const q = new URLSearchParams(location.search);
  return {
    expr: q.get('expr') || '',
    tab: q.get('tab') === 'table' ? 'table' : 'graph',
    range: q.get('range') || '1h',
    end: q.get('end') || '',  // RFC 3339 or unix seconds; "" = now
    step: q.get('step') || '',  // "" = auto
    stacked: q.get('stacked') === '1',
  };
}

function writeState(st) {
  const q = new URLSearchParams();
  if (st.expr) q.set('expr', st.expr);
  q.set('tab', st.tab);
  q.set('range', st.range);
  if (st.end) q.set('end', st.end);
  if (st.step) q.set('step', st.step);
  if (st.stacked) q.set('stacked', '1');
  history.replaceState(null, '', location.pathname + '?' + q.toString());
}

function endSeconds(end) {
  if (!end) return Date.now() / 1000;
  if (/^\d+(\.\d+)?$/.test(end)) return Number(end);
  const t = Date.parse(end);
  return isNaN(t) ? NaN : t / 1000;
}

export function render(root) {
  const st = readState();
  let chart = null;
  const out = h('div', {class: 'result'});
  const msgs = h('div', {class: 'messages'});
  const stats = h('span', {class: 'muted stats'});
  const edHost = h('div', {class: 'editor', id: 'expr-editor'});
  const rangeIn = h('input', {class: 'short', id: 'range', value: st.range, title: 'range: 5m, 1h, 1d'});
  const endIn = h('input', {class: 'mid', id: 'end', value: st.end, placeholder: 'now',
    title: 'end: empty for now, RFC 3339 or unix seconds'});
  const stepIn = h('input', {class: 'short', id: 'step', value: st.step, placeholder: 'auto', title: 'step: 15s, 1m'});
  const stackedIn = h('input', {type: 'checkbox', id: 'stacked', checked: st.stacked});
  const tabs = h('div', {class: 'tabs'});

  // CodeMirror is a chunk of its own, loaded with this page.
  let editor = {value: () => st.expr, view: null};
  let gone = false;
  const ready = import('../editor.js').then(({createEditor}) => {
    if (gone) return;
    editor = createEditor(edHost, st.expr, () => run());
  }).catch((e) => set(edHost, h('div', {class: 'error'}, `editor: ${e.message}`)));

  function shift(factor) {
    const r = parseDuration(rangeIn.value);
    if (!Number.isFinite(r)) return;
    rangeIn.value = fmtDurationShort(Math.max(60, Math.round(r * factor)));
    run();
  }

  function drawTabs() {
    set(tabs, ['graph', 'table'].map((t) => h('button', {
      class: 'tab' + (st.tab === t ? ' active' : ''), id: `tab-${t}`,
      onclick: () => { st.tab = t; drawTabs(); run(); },
    }, t === 'graph' ? 'Graph' : 'Table')));
  }
  drawTabs();

  async function run() {
    st.expr = editor.value().trim();
    st.range = rangeIn.value.trim() || '1h';
    st.end = endIn.value.trim();
    st.step = stepIn.value.trim();
    st.stacked = stackedIn.checked;
    writeState(st);
    set(msgs);
    if (chart) {
      chart.destroy();
      chart = null;
    }
    if (!st.expr) {
      set(out, h('p', {class: 'muted'}, 'Enter an expression.'));
      return;
    }
    set(out, h('p', {class: 'muted'}, 'Loading…'));
    const t0 = performance.now();
    const end = endSeconds(st.end);
    const range = parseDuration(st.range);
    if (!Number.isFinite(end)) return fail(`end: cannot parse "${st.end}" as a time`);
    if (!Number.isFinite(range) || range <= 0) return fail(`range: cannot parse "${st.range}" as a duration`);
    try {
      if (st.tab === 'table') {
        const r = await query(st.expr, st.end ? String(end) : undefined);
        showNotes(r);
        table(r.data);
      } else {
        let step = st.step ? parseDuration(st.step) : Math.max(1, Math.floor(range / 250));
        if (!Number.isFinite(step) || step <= 0) return fail(`step: cannot parse "${st.step}" as a duration`);
        const start = end - range;
        const r = await queryRange(st.expr, String(start), String(end), String(step));
        showNotes(r);
        const data = alignMatrix([{result: r.data.result}], start, end, step);
        set(out, h('div', {class: 'chart', id: 'query-chart'}));
        chart = new TimeChart(out.firstChild, {stacked: st.stacked, height: 360, maxTooltip: 15,
          onZoom: (a, b) => {
            endIn.value = new Date(b * 1000).toISOString();
            rangeIn.value = fmtDurationShort(Math.max(1, Math.round(b - a)));
            stepIn.value = '';
            run();
          }});
        chart.setData(data);
        out.dataset.series = String(data.series.length);
        out.append(h('p', {class: 'muted'}, `${data.series.length} series, ${data.xs.length} points each, step ${fmtDurationShort(step)}`));
      }
      stats.textContent = `${Math.round(performance.now() - t0)} ms`;
    } catch (e) {
      fail(e.message);
    }
  }

  function fail(text) {
    set(out, h('div', {class: 'error', id: 'query-error'}, text));
  }

  function showNotes(r) {
    set(msgs,
      r.warnings.map((w) => h('div', {class: 'warning'}, 'Warning: ', w)),
      r.infos.map((w) => h('div', {class: 'info'}, 'Info: ', w)));
  }

  function table(data) {
    const rows = [];
    if (data.resultType === 'vector') {
      for (const s of data.result.slice(0, TABLE_ROWS)) {
        const v = s.value ? s.value[1] : s.histogram ? 'native histogram' : '';
        rows.push(h('tr', null, h('td', {class: 'mono'}, labelsText(s.metric)), h('td', {class: 'num'}, v)));
      }
    } else if (data.resultType === 'matrix') {
      for (const s of data.result.slice(0, TABLE_ROWS)) {
        rows.push(h('tr', null, h('td', {class: 'mono'}, labelsText(s.metric)),
          h('td', {class: 'num'}, (s.values || []).map(([t, v]) => h('div', null, `${v} @${t}`)))));
      }
    } else if (data.resultType === 'scalar' || data.resultType === 'string') {
      rows.push(h('tr', null, h('td', null, data.resultType), h('td', {class: 'num'}, data.result[1])));
    }
    const n = Array.isArray(data.result) && data.resultType !== 'scalar' && data.resultType !== 'string'
      ? data.result.length : 1;
    set(out,
      rows.length ? h('table', {class: 'grid', id: 'query-table'},
        h('thead', null, h('tr', null, h('th', null, 'Series'), h('th', null, 'Value'))),
        h('tbody', null, rows)) : h('p', {class: 'muted', id: 'query-empty'}, 'Empty query result'),
      n > TABLE_ROWS ? h('p', {class: 'warning'}, `Showing ${TABLE_ROWS} of ${n} series.`) : null);
    out.dataset.series = String(n);
  }

  set(root,
    h('h1', null, 'Query'),
    h('div', {class: 'querybox'}, edHost,
      h('button', {class: 'primary', id: 'execute', onclick: () => run()}, 'Execute')),
    h('div', {class: 'controls'}, tabs,
      h('label', null, 'Range ', h('button', {onclick: () => shift(0.5), title: 'shorter'}, '−'),
        rangeIn, h('button', {onclick: () => shift(2), title: 'longer'}, '+')),
      h('label', null, 'End ', endIn),
      h('label', null, 'Step ', stepIn),
      h('label', null, stackedIn, ' stacked'),
      h('a', {href: '#', id: 'copy-link', onclick: (e) => {
        e.preventDefault();
        navigator.clipboard && navigator.clipboard.writeText(location.href).catch(() => {});
        e.target.textContent = 'link copied';
      }}, 'copy link'),
      stats),
    msgs, out);
  stackedIn.addEventListener('change', () => {
    st.stacked = stackedIn.checked;
    writeState(st);
    if (chart) chart.setStacked(st.stacked);
  });
  for (const inp of [rangeIn, endIn, stepIn]) {
    inp.addEventListener('keydown', (e) => { if (e.key === 'Enter') run(); });
  }
  if (st.expr) ready.then(() => { if (!gone) run(); });
  else set(out, h('p', {class: 'muted'}, 'Enter an expression.'));
  return () => {
    gone = true;
    if (chart) chart.destroy();
    if (editor.view) editor.view.destroy();
  };
}

export {fmtValue};

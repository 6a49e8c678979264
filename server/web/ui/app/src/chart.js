// Range graphs on uPlot: aligned series, legend with toggling, hover values,
// stacking, threshold bands. And a canvas heat map (one row per series).
import uPlot from 'uplot';
import {h, set} from './dom.js';
import {fmtValue, legendName} from './format.js';

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b',
  '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939', '#8c6d31',
  '#843c39', '#7b4173', '#3182bd', '#e6550d', '#31a354', '#756bb1', '#636363'];

export const color = (i) => PALETTE[i % PALETTE.length];

// Matrix results (one or more queries) on the grid start..end by step:
// {xs: [seconds], series: [{name, metric, values: [number|null]}]}.
export function alignMatrix(results, start, end, step) {
  const n = Math.max(1, Math.floor((end - start) / step + 1e-9) + 1);
  const xs = new Array(n);
  for (let i = 0; i < n; i++) xs[i] = start + i * step;
  const series = [];
  for (const {result, legend} of results) {
    for (const s of result || []) {
      const values = new Array(n).fill(null);
      for (const [t, v] of s.values || []) {
        const i = Math.round((t - start) / step);
        if (i >= 0 && i < n) values[i] = parseFloat(v);
      }
      series.push({name: legendName(legend, s.metric), metric: s.metric, values});
    }
  }
  return {xs, series};
}

// Draws translucent bands (thresholds) under the series.
function bandsPlugin(getBands) {
  return {
    hooks: {
      drawClear: [(u) => {
        const bands = getBands();
        if (!bands || !bands.length) return;
        const {ctx, bbox} = u;
        ctx.save();
        for (const b of bands) {
          const y0 = u.valToPos(b.from ?? u.scales.y.min, 'y', true);
          const y1 = u.valToPos(b.to ?? u.scales.y.max, 'y', true);
          const top = Math.max(bbox.top, Math.min(y0, y1));
          const bot = Math.min(bbox.top + bbox.height, Math.max(y0, y1));
          if (bot <= top) continue;
          ctx.fillStyle = b.color;
          ctx.fillRect(bbox.left, top, bbox.width, bot - top);
        }
        ctx.restore();
      }],
    },
  };
}

// uPlot points.filter: the indices of values with null on both sides.
function isolated(u, si, show) {
  if (show) return null;
  const d = u.data[si];
  const out = [];
  for (let i = 0; i < d.length; i++) {
    if (d[i] !== null && (i === 0 || d[i - 1] === null) && (i === d.length - 1 || d[i + 1] === null)) out.push(i);
  }
  return out.length ? out : null;
}

export class TimeChart {
  // opts: {unit, stacked, bands: [{from, to, color}], min, max, height,
  //        legend: true|false, maxTooltip}
  constructor(el, opts = {}) {
    this.el = el;
    this.opts = opts;
    this.u = null;
    this.hidden = new Set();  // series names switched off in the legend
    this.plotEl = h('div', {class: 'plot'});
    this.tip = h('div', {class: 'tooltip', style: {display: 'none'}});
    this.legendEl = h('div', {class: 'legend'});
    set(el, h('div', {class: 'plotwrap'}, this.plotEl, this.tip),
      opts.legend === false ? null : this.legendEl);
    this.ro = new ResizeObserver(() => this.resize());
    this.ro.observe(el);
  }

  width() {
    return Math.max(200, this.el.clientWidth || 600);
  }

  // data: {xs, series: [{name, values}]}
  setData(data) {
    this.data = data;
    this.draw();
  }

  setStacked(stacked) {
    this.opts.stacked = stacked;
    if (this.data) this.draw();
  }

  draw() {
    const {xs, series} = this.data;
    const opts = this.opts;
    if (this.u) {
      this.u.destroy();
      this.u = null;
    }
    const visible = series.map((s) => !this.hidden.has(s.name));
    let ys = series.map((s) => s.values);
    if (opts.stacked) {
      // Each shown series sits on the sum of the shown ones before it.
      const acc = new Array(xs.length).fill(0);
      ys = series.map((s, k) => {
        if (!visible[k]) return s.values;
        const out = new Array(xs.length);
        for (let i = 0; i < xs.length; i++) {
          const v = s.values[i];
          acc[i] += v === null || !Number.isFinite(v) ? 0 : v;
          out[i] = v === null ? null : acc[i];
        }
        return out;
      });
    }
    const many = series.length > 40;
    const useq = [{}];
    series.forEach((s, k) => {
      const c = color(k);
      useq.push({
        label: s.name,
        stroke: c,
        width: 1.25,
        show: visible[k],
        fill: opts.stacked ? c + '55' : undefined,
        // Lines only, but a value with no neighbour (a series that just
        // started, a sparse one) is drawn as a dot, or it would not show.
        points: {show: false, size: 5, fill: c, filter: isolated},
        spanGaps: false,
      });
    });
    const bands = [];
    if (opts.stacked) {
      let prev = 0;
      series.forEach((s, k) => {
        if (!visible[k]) return;
        if (prev) bands.push({series: [k + 1, prev], fill: color(k) + '55'});
        prev = k + 1;
      });
      // With bands, only the lowest series fills to zero.
      let first = true;
      for (let k = 1; k < useq.length; k++) {
        if (!useq[k].show) continue;
        if (!first) useq[k].fill = undefined;
        first = false;
      }
    }
    const unit = opts.unit;
    const yRange = (u, dmin, dmax) => {
      let lo = opts.min ?? (dmin ?? 0);
      let hi = opts.max ?? (dmax ?? 1);
      if (opts.min === undefined && lo > 0) lo = 0;
      // The lowest threshold stays in sight: how far the data is from it
      // is what a board is read for.
      const first = Math.min(...(opts.bands || []).map((b) => b.from ?? Infinity).filter((v) => v > lo));
      if (opts.max === undefined && Number.isFinite(first) && hi < first * 1.25) hi = first * 1.25;
      if (hi <= lo) hi = lo + (Math.abs(lo) || 1);
      const pad = opts.max === undefined ? (hi - lo) * 0.05 : 0;
      return [lo, hi + pad];
    };
    const uopts = {
      width: this.width(),
      height: opts.height || 220,
      series: useq,
      bands,
      legend: {show: false},
      cursor: {points: {show: !many}, drag: {x: true, y: false}},
      focus: {alpha: 1},
      scales: {x: {time: true}, y: {range: yRange}},
      axes: [
        {stroke: '#666', grid: {stroke: '#eee'}, ticks: {stroke: '#ddd'}},
        {
          stroke: '#666', grid: {stroke: '#eee'}, ticks: {stroke: '#ddd'},
          size: (u, values) => Math.max(48, 14 + 7 * Math.max(0, ...(values || []).map((v) => String(v).length))),
          values: (u, splits) => splits.map((v) => fmtValue(v, unit)),
        },
      ],
      plugins: [bandsPlugin(() => opts.bands)],
      hooks: {
        setCursor: [(u) => this.hover(u)],
        setSelect: [(u) => {
          if (u.select.width > 2 && opts.onZoom) {
            const a = u.posToVal(u.select.left, 'x');
            const b = u.posToVal(u.select.left + u.select.width, 'x');
            opts.onZoom(a, b);
          }
        }],
      },
    };
    this.u = new uPlot(uopts, [xs, ...ys], this.plotEl);
    this.drawLegend();
  }

  hover(u) {
    const idx = u.cursor.idx;
    if (idx === null || idx === undefined || !this.data) {
      this.tip.style.display = 'none';
      return;
    }
    const rows = [];
    this.data.series.forEach((s, k) => {
      if (this.hidden.has(s.name)) return;
      const v = s.values[idx];
      if (v !== null && v !== undefined) rows.push([v, k]);
    });
    rows.sort((a, b) => b[0] - a[0]);
    const max = this.opts.maxTooltip || 12;
    const t = new Date(this.data.xs[idx] * 1000);
    set(this.tip, h('div', {class: 'tiptime'}, t.toLocaleString()),
      rows.slice(0, max).map(([v, k]) => h('div', {class: 'tiprow'},
        h('span', {class: 'swatch', style: {background: color(k)}}),
        h('span', {class: 'tipname'}, this.data.series[k].name),
        h('b', null, fmtValue(v, this.opts.unit)))),
      rows.length > max ? h('div', {class: 'muted'}, `… ${rows.length - max} more`) : null,
      rows.length === 0 ? h('div', {class: 'muted'}, 'no value') : null);
    const left = u.cursor.left;
    const w = u.over.clientWidth;
    this.tip.style.display = 'block';
    this.tip.style.left = (left > w / 2 ? left - this.tip.offsetWidth - 10 : left + 70) + 'px';
    this.tip.style.top = '8px';
  }

  drawLegend() {
    if (this.opts.legend === false) return;
    const series = this.data.series;
    if (series.length === 0) {
      set(this.legendEl);
      return;
    }
    const items = series.map((s, k) => {
      const off = this.hidden.has(s.name);
      return h('span', {
        class: 'legenditem' + (off ? ' off' : ''),
        title: 'click: show/hide; ctrl/cmd-click: show only this one',
        onclick: (e) => this.toggle(k, e.ctrlKey || e.metaKey),
      }, h('span', {class: 'swatch', style: {background: color(k)}}), s.name);
    });
    set(this.legendEl, items);
  }

  toggle(k, only) {
    const names = this.data.series.map((s) => s.name);
    const name = names[k];
    if (only) {
      const isOnly = !this.hidden.has(name) && this.hidden.size === names.length - 1;
      this.hidden = new Set(isOnly ? [] : names.filter((n) => n !== name));
    } else if (this.hidden.has(name)) {
      this.hidden.delete(name);
    } else {
      this.hidden.add(name);
    }
    if (this.opts.stacked) {
      this.draw();
      return;
    }
    names.forEach((n, i) => {
      const show = !this.hidden.has(n);
      if (this.u.series[i + 1].show !== show) this.u.setSeries(i + 1, {show});
    });
    this.drawLegend();
  }

  resize() {
    if (this.u && Math.abs(this.u.width - this.width()) > 2) {
      this.u.setSize({width: this.width(), height: this.u.height});
    }
  }

  destroy() {
    this.ro.disconnect();
    if (this.u) this.u.destroy();
  }
}

// Value 0..max -> colour from dark blue through green and yellow to red.
function heat(v, max) {
  const x = Math.max(0, Math.min(1, v / max));
  const hue = 240 - 240 * x;
  return `hsl(${hue}, 80%, ${35 + 20 * x}%)`;
}

// One row per series, one cell per step; the colour is the value.
export class Heatmap {
  constructor(el, opts = {}) {
    this.el = el;
    this.opts = opts;
    this.canvas = h('canvas', {class: 'heatmap'});
    this.info = h('div', {class: 'muted heatinfo'}, 'hover a cell');
    set(el, this.canvas, this.info);
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
  }

  setData(data) {
    this.data = data;
    const {xs, series} = data;
    const rowH = 12;
    const labelW = 170;
    const w = Math.max(300, this.el.clientWidth || 600);
    const hgt = Math.max(rowH, series.length * rowH);
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = w * dpr;
    this.canvas.height = hgt * dpr;
    this.canvas.style.width = w + 'px';
    this.canvas.style.height = hgt + 'px';
    const ctx = this.canvas.getContext('2d');
    ctx.scale(dpr, dpr);
    ctx.clearRect(0, 0, w, hgt);
    const cellW = (w - labelW) / Math.max(1, xs.length);
    this.geom = {rowH, labelW, cellW};
    const max = this.opts.max || 100;
    ctx.font = '10px sans-serif';
    series.forEach((s, r) => {
      ctx.fillStyle = '#333';
      ctx.fillText(s.name.slice(0, 30), 2, r * rowH + rowH - 2);
      for (let i = 0; i < xs.length; i++) {
        const v = s.values[i];
        if (v === null) continue;
        ctx.fillStyle = heat(v, max);
        ctx.fillRect(labelW + i * cellW, r * rowH, Math.ceil(cellW), rowH - 1);
      }
    });
  }

  hover(e) {
    if (!this.data || !this.geom) return;
    const rect = this.canvas.getBoundingClientRect();
    const {rowH, labelW, cellW} = this.geom;
    const r = Math.floor((e.clientY - rect.top) / rowH);
    const i = Math.floor((e.clientX - rect.left - labelW) / cellW);
    const s = this.data.series[r];
    if (!s || i < 0 || i >= this.data.xs.length) return;
    const t = new Date(this.data.xs[i] * 1000).toLocaleTimeString();
    this.info.textContent = `${s.name} at ${t}: ${fmtValue(s.values[i], this.opts.unit)}`;
  }

  destroy() {}
}

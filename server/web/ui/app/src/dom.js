// Tiny DOM helpers: h() builds elements, so the pages need no view library.

// h("div", {class: "x", onclick: f}, "text", child, [more]) -> element.
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') {
        el.addEventListener(k.slice(2), v);
      } else if (k === 'class') {
        el.className = v;
      } else if (k === 'style' && typeof v === 'object') {
        Object.assign(el.style, v);
      } else if (k === 'value' || k === 'checked' || k === 'selected') {
        el[k] = v;
      } else {
        el.setAttribute(k, v === true ? '' : String(v));
      }
    }
  }
  append(el, kids);
  return el;
}

export function append(el, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return el;
}

// Replaces the children of `el`.
export function set(el, ...kids) {
  el.replaceChildren();
  return append(el, kids);
}

// "2026-12-01 17:48:13" in local time, or "-" for nothing.
export function fmtTime(t) {
  const d = t instanceof Date ? t : new Date(t);
  if (isNaN(d.getTime()) || d.getTime() <= 0) return '-';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// "3m 12s ago" for an RFC 3339 time or a Date.
export function ago(t) {
  const ms = Date.now() - new Date(t).getTime();
  if (isNaN(ms) || new Date(t).getFullYear() < 1971) return 'never';
  return fmtDuration(Math.abs(ms) / 1000) + (ms >= 0 ? ' ago' : ' from now');
}

export function fmtDuration(s) {
  if (s < 1) return `${Math.round(s * 1000)}ms`;
  const parts = [];
  const units = [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]];
  for (const [u, n] of units) {
    if (s >= n || (u === 's' && parts.length === 0)) {
      const q = Math.floor(s / n);
      parts.push(`${q}${u}`);
      s -= q * n;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

// {a="b", c="d"} of a label set, metric name first.
export function labelsText(m) {
  const name = m.__name__ || '';
  const rest = Object.entries(m).filter(([k]) => k !== '__name__')
    .map(([k, v]) => `${k}="${v}"`).join(', ');
  return rest ? `${name}{${rest}}` : (name || '{}');
}

// Label chips: one small box per pair.
export function labelChips(m) {
  return h('span', {class: 'chips'},
    Object.entries(m || {}).map(([k, v]) => h('span', {class: 'chip'}, `${k}=${v}`)));
}

export function healthBadge(health) {
  const cls = {up: 'ok', ok: 'ok', down: 'bad', err: 'bad', unknown: 'unk'}[health] || 'unk';
  return h('span', {class: `badge ${cls}`}, health || 'unknown');
}

// A titled section that folds.
export function section(title, body, open = true) {
  const d = h('details', {class: 'section', open}, h('summary', null, title), body);
  return d;
}

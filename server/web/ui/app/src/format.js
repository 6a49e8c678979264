// Number formatting by unit (the Grafana board's units).

export function fmtValue(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return '-';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  switch (unit) {
    case 's':
      if (v !== 0 && Math.abs(v) < 1) return `${short(v * 1000)}ms`;
      return `${short(v)}s`;
    case 'percentunit': return `${short(v * 100)}%`;
    case 'percent': return `${short(v)}%`;
    case 'reqps': return `${short(v)} req/s`;
    case 'ops': return `${short(v)}/s`;
    case 'celsius': return `${short(v)}°C`;
    case 'watt': return `${short(v)} W`;
    case 'mbytes': return v >= 1024 ? `${short(v / 1024)} GiB` : `${short(v)} MiB`;
    default: return short(v);
  }
}

// 3 significant digits, k/M/G above 10^4.
export function short(v) {
  const a = Math.abs(v);
  if (a >= 1e18) return v.toExponential(2);
  if (a >= 1e15) return trim(v / 1e15) + 'P';
  if (a >= 1e12) return trim(v / 1e12) + 'T';
  if (a >= 1e9) return trim(v / 1e9) + 'G';
  if (a >= 1e6) return trim(v / 1e6) + 'M';
  if (a >= 1e4) return trim(v / 1e3) + 'k';
  return trim(v);
}

function trim(v) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  let s = v.toFixed(digits);
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  if (s === '0' || s === '-0') s = v.toPrecision(2);
  return s;
}

// "{{instance}} GPU {{gpu}}" filled from a label set; without a template
// the label set itself.
export function legendName(tpl, metric) {
  if (!tpl) {
    const name = metric.__name__ || '';
    const rest = Object.entries(metric).filter(([k]) => k !== '__name__')
      .map(([k, v]) => `${k}="${v}"`).join(', ');
    return rest ? `${name}{${rest}}` : (name || '{}');
  }
  return tpl.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (_, k) => metric[k] ?? '');
}

// Prometheus durations: "1h", "30m", "1d", "90s", "1h30m". Returns seconds
// or NaN.
export function parseDuration(s) {
  const str = String(s).trim();
  if (/^\d+(\.\d+)?$/.test(str)) return Number(str);
  const re = /(\d+)(ms|y|w|d|h|m|s)/g;
  const mult = {ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000};
  let total = 0;
  let used = 0;
  let m;
  while ((m = re.exec(str)) !== null) {
    total += Number(m[1]) * mult[m[2]];
    used += m[0].length;
  }
  return used === str.length && used > 0 ? total : NaN;
}

export function fmtDurationShort(sec) {
  if (sec > 0 && sec < 1) return `${Math.round(sec * 1000)}ms`;
  const units = [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]];
  let out = '';
  for (const [u, n] of units) {
    if (sec >= n) {
      out += Math.floor(sec / n) + u;
      sec %= n;
    }
  }
  return out || '0s';
}

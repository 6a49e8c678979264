// Alerts: the rule engine's alerts (/api/v1/alerts: pending, firing) joined
// with what the built-in Alertmanager made of them (/api/v2/alerts:
// silenced, inhibited, the receivers), and a feedback button per
// occurrence. Without the Alertmanager (404) the rule states alone.
import {h, set, ago, labelChips, section} from '../dom.js';
import {v1, get, request, PREFIX} from '../api.js';
import {fmtValue} from '../format.js';

// The v2 alert of a v1 one: its labels hold every v1 label (the v2 side may
// add the external labels).
function match(v1a, v2list) {
  return v2list.find((b) => Object.entries(v1a.labels).every(([k, v]) => b.labels[k] === v));
}

export function displayState(v1a, v2a) {
  if (v2a && v2a.status) {
    if ((v2a.status.silencedBy || []).length) return 'silenced';
    if ((v2a.status.inhibitedBy || []).length) return 'inhibited';
  }
  return v1a ? v1a.state : (v2a && v2a.status && v2a.status.state === 'active' ? 'firing' : 'unprocessed');
}

function silenceLink(labels) {
  const m = Object.entries(labels).filter(([k]) => k !== '__name__')
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ');
  return `${PREFIX}/silences?${new URLSearchParams({matchers: m})}`;
}

let feedbackAvailable = true;

function feedback(alert) {
  const comment = h('input', {class: 'mid', placeholder: 'comment (optional)'});
  const status = h('span', {class: 'muted fbstatus'});
  const send = async (actionable, btns) => {
    status.textContent = 'sending…';
    try {
      await request('POST', '/api/v1/alerts/feedback', undefined, {
        fingerprint: alert.fingerprint || '',
        labels: alert.labels,
        startsAt: alert.startsAt,
        actionable,
        comment: comment.value,
      });
      status.textContent = actionable ? 'recorded: actionable' : 'recorded: not actionable';
    } catch (e) {
      if (e.status === 404 || e.status === 405) {
        feedbackAvailable = false;
        // Every button of the page: the endpoint is absent, not this alert.
        document.querySelectorAll('.feedback button').forEach((b) => { b.disabled = true; });
        document.querySelectorAll('.fbstatus').forEach((s) => { s.textContent = 'feedback is not available in this build'; });
      } else {
        status.textContent = `failed: ${e.message}`;
      }
    }
  };
  const yes = h('button', {class: 'fb-yes'}, 'actionable');
  const no = h('button', {class: 'fb-no'}, 'not actionable');
  yes.onclick = () => send(true, [yes, no]);
  no.onclick = () => send(false, [yes, no]);
  if (!feedbackAvailable) {
    yes.disabled = no.disabled = true;
    status.textContent = 'feedback is not available in this build';
  }
  return h('div', {class: 'feedback'}, yes, no, comment, status);
}

export function render(root) {
  const body = h('div', null, h('p', {class: 'muted'}, 'Loading…'));
  const filter = h('select', {id: 'state-filter'},
    ['all', 'firing', 'pending', 'silenced', 'inhibited'].map((s) => h('option', {value: s}, s)));
  set(root, h('h1', null, 'Alerts'), h('div', {class: 'controls'}, h('label', null, 'State ', filter)), body);
  let rows = null;
  let rules = [];
  let amNote = null;

  function draw() {
    const shown = rows.filter((r) => filter.value === 'all' || r.state === filter.value);
    const counts = {};
    for (const r of rows) counts[r.state] = (counts[r.state] || 0) + 1;
    set(body, amNote,
      h('p', {id: 'alert-counts'}, ['firing', 'pending', 'silenced', 'inhibited'].map((s) =>
        h('span', {class: `badge ${s}`}, `${s}: ${counts[s] || 0}`))),
      shown.length === 0 ? h('p', {class: 'muted'}, 'No active alerts.') :
        h('table', {class: 'grid alerts', id: 'alerts-table'},
          h('thead', null, h('tr', null, ['State', 'Alert', 'Active since', 'Receiver', 'Value', 'Feedback']
            .map((c) => h('th', null, c)))),
          h('tbody', null, shown.map((r) => h('tr', {class: `alert-${r.state}`},
            h('td', null, h('span', {class: `badge ${r.state}`}, r.state)),
            h('td', null, h('b', null, r.labels.alertname), ' ', labelChips(r.labels),
              Object.entries(r.annotations || {}).map(([k, v]) => h('div', {class: 'annotation'}, h('i', null, k), ': ', v)),
              h('a', {href: silenceLink(r.labels), 'data-nav': '', class: 'small'}, 'silence…')),
            h('td', {title: r.startsAt}, ago(r.startsAt)),
            h('td', null, r.receivers.join(', ') || h('span', {class: 'muted'}, '-')),
            h('td', {class: 'num'}, r.value === undefined ? '' : fmtValue(parseFloat(r.value))),
            h('td', null, feedback(r)))))),
      section(h('b', null, 'Alerting rules'), h('table', {class: 'grid'},
        h('thead', null, h('tr', null, ['Rule', 'State', 'Active', 'Group'].map((c) => h('th', null, c)))),
        h('tbody', null, rules.map(([g, r]) => h('tr', null,
          h('td', null, r.name), h('td', null, h('span', {class: `badge ${r.state}`}, r.state)),
          h('td', {class: 'num'}, (r.alerts || []).length), h('td', {class: 'muted'}, g.name)))))));
  }

  Promise.all([
    v1('/api/v1/alerts'),
    get('/api/v2/alerts').catch((e) => (e.status === 404 ? null : Promise.reject(e))),
    v1('/api/v1/rules', {type: 'alert'}).catch(() => ({data: {groups: []}})),
  ]).then(([a, am, r]) => {
    rules = [];
    for (const g of r.data.groups) for (const rule of g.rules) if (rule.type === 'alerting') rules.push([g, rule]);
    rules.sort((x, y) => ['firing', 'pending', 'inactive'].indexOf(x[1].state) - ['firing', 'pending', 'inactive'].indexOf(y[1].state));
    const v2 = am || [];
    if (am === null) {
      amNote = h('p', {class: 'note', id: 'am-off'},
        'The built-in Alertmanager is off (no --alertmanager.config.file): rule states only, no silences or receivers.');
    }
    const used = new Set();
    rows = a.data.alerts.map((x) => {
      const y = match(x, v2);
      if (y) used.add(y);
      return {
        state: displayState(x, y), labels: x.labels, annotations: x.annotations, value: x.value,
        startsAt: y ? y.startsAt : x.activeAt, fingerprint: y ? y.fingerprint : '',
        receivers: y ? (y.receivers || []).map((rc) => rc.name) : [],
      };
    });
    for (const y of v2) {
      if (used.has(y)) continue;
      rows.push({state: displayState(null, y), labels: y.labels, annotations: y.annotations,
        startsAt: y.startsAt, fingerprint: y.fingerprint, receivers: (y.receivers || []).map((rc) => rc.name)});
    }
    const order = ['firing', 'silenced', 'inhibited', 'pending', 'unprocessed'];
    rows.sort((p, q) => order.indexOf(p.state) - order.indexOf(q.state) ||
      String(p.labels.alertname).localeCompare(String(q.labels.alertname)));
    filter.onchange = draw;
    draw();
  }).catch((e) => set(body, h('div', {class: 'error'}, e.message)));
}

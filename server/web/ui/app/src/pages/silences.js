// Silences of the built-in Alertmanager (/api/v2/silences): the list, a
// form to create one (matchers, a start that may be in the future, a
// duration, a comment) and expiry.
import {h, set, fmtTime} from '../dom.js';
import {get, request} from '../api.js';
import {parseDuration} from '../format.js';

// `alertname="X", instance=~"gpu-.*"` -> Alertmanager v2 matchers. Throws
// an Error naming the bad part.
export function parseMatchers(text) {
  const out = [];
  let s = text.trim();
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|[^,\s]+)\s*(,|$)/y;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m || m[0].length === 0) throw new Error(`matchers: cannot parse "${s.slice(pos)}" (want name="value", name=~"regex", ...)`);
    let value = m[3];
    if (value.startsWith('"')) value = JSON.parse(value);
    out.push({name: m[1], value, isRegex: m[2].includes('~'), isEqual: !m[2].startsWith('!')});
    pos = re.lastIndex;
  }
  if (!out.length) throw new Error('matchers: at least one is needed');
  return out;
}

const matcherText = (m) => `${m.name}${m.isEqual === false ? '!' : ''}${m.isRegex ? '~' : '='}${JSON.stringify(m.value)}`.replace('!=~', '!~').replace('=~=', '=~');

function localInput(d) {
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function render(root) {
  const q = new URLSearchParams(location.search);
  const list = h('div', null, h('p', {class: 'muted'}, 'Loading…'));
  const matchers = h('input', {id: 'silence-matchers', class: 'wide', value: q.get('matchers') || '',
    placeholder: 'alertname="XidError", instance=~"gpu-node-1.*"'});
  const start = h('input', {id: 'silence-start', type: 'datetime-local', value: localInput(new Date())});
  const duration = h('input', {id: 'silence-duration', class: 'short', value: '2h'});
  const creator = h('input', {id: 'silence-creator', class: 'mid', value: localStorage.getItem('vigil.silence.creator') || ''});
  const comment = h('input', {id: 'silence-comment', class: 'wide', placeholder: 'why'});
  const formMsg = h('div', {id: 'silence-msg'});
  const showExpired = h('input', {type: 'checkbox', id: 'show-expired'});

  async function create(e) {
    e.preventDefault();
    set(formMsg);
    try {
      const ms = parseMatchers(matchers.value);
      const startsAt = start.value ? new Date(start.value) : new Date();
      if (isNaN(startsAt.getTime())) throw new Error(`start: cannot parse "${start.value}"`);
      const dur = parseDuration(duration.value);
      if (!Number.isFinite(dur) || dur <= 0) throw new Error(`duration: cannot parse "${duration.value}" (e.g. 2h, 30m)`);
      if (!creator.value.trim()) throw new Error('created by: required');
      if (!comment.value.trim()) throw new Error('comment: required');
      localStorage.setItem('vigil.silence.creator', creator.value.trim());
      const r = await request('POST', '/api/v2/silences', undefined, {
        matchers: ms,
        startsAt: startsAt.toISOString(),
        endsAt: new Date(startsAt.getTime() + dur * 1000).toISOString(),
        createdBy: creator.value.trim(),
        comment: comment.value.trim(),
      });
      set(formMsg, h('div', {class: 'ok', id: 'silence-created'}, `Silence ${r.silenceID} created.`));
      load();
    } catch (err) {
      set(formMsg, h('div', {class: 'error'}, err.message));
    }
  }

  async function expire(id) {
    try {
      await request('DELETE', `/api/v2/silence/${encodeURIComponent(id)}`);
      load();
    } catch (err) {
      set(formMsg, h('div', {class: 'error'}, err.message));
    }
  }

  function load() {
    get('/api/v2/silences').then((all) => {
      const order = {active: 0, pending: 1, expired: 2};
      all.sort((a, b) => order[a.status.state] - order[b.status.state] || b.startsAt.localeCompare(a.startsAt));
      const shown = all.filter((s) => showExpired.checked || s.status.state !== 'expired');
      set(list, shown.length === 0 ? h('p', {class: 'muted'}, 'No silences.') :
        h('table', {class: 'grid', id: 'silences-table'},
          h('thead', null, h('tr', null, ['State', 'Matchers', 'Starts', 'Ends', 'Created by', 'Comment', '']
            .map((c) => h('th', null, c)))),
          h('tbody', null, shown.map((s) => h('tr', {'data-id': s.id, class: `silence-${s.status.state}`},
            h('td', null, h('span', {class: `badge ${s.status.state}`}, s.status.state)),
            h('td', {class: 'mono'}, s.matchers.map(matcherText).join(', ')),
            h('td', null, fmtTime(s.startsAt)), h('td', null, fmtTime(s.endsAt)),
            h('td', null, s.createdBy), h('td', null, s.comment),
            h('td', null, s.status.state === 'expired' ? null :
              h('button', {class: 'expire', onclick: () => expire(s.id)}, 'Expire')))))));
    }).catch((e) => set(list, h('div', {class: 'error'}, e.status === 404
      ? 'The built-in Alertmanager is off: start vigil with --alertmanager.config.file to use silences.'
      : e.message)));
  }

  showExpired.onchange = load;
  set(root, h('h1', null, 'Silences'),
    h('form', {class: 'silenceform', onsubmit: create},
      h('label', null, 'Matchers ', matchers),
      h('div', {class: 'controls'},
        h('label', null, 'Start ', start), h('label', null, 'Duration ', duration),
        h('label', null, 'Created by ', creator)),
      h('label', null, 'Comment ', comment),
      h('button', {class: 'primary', type: 'submit', id: 'silence-create'}, 'Create silence'), formMsg),
    h('h2', null, 'Silences ', h('label', {class: 'small'}, showExpired, ' show expired')), list);
  load();
}

// Rules: every group with its rules' health, last evaluation, duration and
// error; each expression links to the Query page.
import {h, set, ago, labelChips, healthBadge, section} from '../dom.js';
import {v1, PREFIX} from '../api.js';

export const queryLink = (expr, tab = 'table') =>
  `${PREFIX}/query?${new URLSearchParams({expr, tab, range: '1h'})}`;

export function render(root) {
  const body = h('div', null, h('p', {class: 'muted'}, 'Loading…'));
  set(root, h('h1', null, 'Rules'), body);
  v1('/api/v1/rules').then(({data}) => {
    if (!data.groups.length) return set(body, h('p', {class: 'muted'}, 'No rule groups loaded.'));
    set(body, data.groups.map((g) => section(
      h('span', null, h('b', null, g.name), h('span', {class: 'muted'},
        ` ${g.file} · every ${g.interval}s · last ${ago(g.lastEvaluation)} · took ${(g.evaluationTime * 1000).toFixed(1)} ms`)),
      h('table', {class: 'grid rules'},
        h('thead', null, h('tr', null, ['Rule', 'Health', 'Last evaluation', 'Duration', 'Error']
          .map((c) => h('th', null, c)))),
        h('tbody', null, g.rules.map((r) => h('tr', {class: r.health === 'err' ? 'rowbad' : ''},
          h('td', null,
            h('div', null, h('b', null, r.type === 'alerting' ? 'alert: ' : 'record: '), r.name,
              r.type === 'alerting' ? h('span', {class: `badge ${r.state}`}, r.state) : null),
            h('a', {class: 'mono expr', href: queryLink(r.query, 'graph'), 'data-nav': ''}, r.query),
            r.duration ? h('div', {class: 'muted'}, `for: ${r.duration}s`) : null,
            r.labels && Object.keys(r.labels).length ? labelChips(r.labels) : null),
          h('td', null, healthBadge(r.health)),
          h('td', {title: r.lastEvaluation}, ago(r.lastEvaluation)),
          h('td', {class: 'num'}, `${(r.evaluationTime * 1000).toFixed(2)} ms`),
          h('td', {class: 'errtext'}, r.lastError || ''))))))));
  }).catch((e) => set(body, h('div', {class: 'error'}, e.message)));
}

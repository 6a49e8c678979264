// Targets: per job, each target's health, labels, last scrape, duration and
// last error, with a health filter and a text filter.
import {h, set, ago, labelChips, healthBadge, section} from '../dom.js';
import {v1} from '../api.js';

export function render(root) {
  const q = new URLSearchParams(location.search);
  const health = h('select', {id: 'health-filter'},
    ['all', 'up', 'down', 'unknown'].map((x) => h('option', {value: x, selected: q.get('health') === x}, x)));
  const text = h('input', {id: 'text-filter', placeholder: 'filter by label, URL or error', value: q.get('q') || ''});
  const body = h('div', null, h('p', {class: 'muted'}, 'Loading…'));
  let data = null;

  function draw() {
    const params = new URLSearchParams();
    if (health.value !== 'all') params.set('health', health.value);
    if (text.value) params.set('q', text.value);
    history.replaceState(null, '', location.pathname + (params.toString() ? '?' + params : ''));
    const needle = text.value.toLowerCase();
    const byJob = new Map();
    for (const t of data.activeTargets) {
      const job = t.labels.job || t.scrapePool;
      if (!byJob.has(job)) byJob.set(job, []);
      byJob.get(job).push(t);
    }
    const jobs = [...byJob.keys()].sort();
    set(body, jobs.map((job) => {
      const all = byJob.get(job);
      const up = all.filter((t) => t.health === 'up').length;
      const shown = all.filter((t) => (health.value === 'all' || t.health === health.value) &&
        (!needle || JSON.stringify(t.labels).toLowerCase().includes(needle) ||
         t.scrapeUrl.toLowerCase().includes(needle) || (t.lastError || '').toLowerCase().includes(needle)));
      if (shown.length === 0) return null;
      return section(h('span', null, h('b', null, job), ` (${up}/${all.length} up)`),
        h('table', {class: 'grid targets', 'data-job': job},
          h('thead', null, h('tr', null, ['Endpoint', 'State', 'Labels', 'Last scrape', 'Duration', 'Error']
            .map((c) => h('th', null, c)))),
          h('tbody', null, shown.map((t) => h('tr', {class: t.health === 'down' ? 'rowbad' : ''},
            h('td', {class: 'mono'}, h('a', {href: t.scrapeUrl, target: '_blank', rel: 'noreferrer'}, t.scrapeUrl)),
            h('td', null, healthBadge(t.health)),
            h('td', null, labelChips(t.labels)),
            h('td', {title: t.lastScrape}, ago(t.lastScrape)),
            h('td', {class: 'num'}, `${(t.lastScrapeDuration * 1000).toFixed(1)} ms`),
            h('td', {class: 'errtext'}, t.lastError || ''))))));
    }), jobs.length === 0 ? h('p', {class: 'muted'}, 'No targets.') : null);
  }

  health.addEventListener('change', () => data && draw());
  text.addEventListener('input', () => data && draw());
  set(root, h('h1', null, 'Targets'),
    h('div', {class: 'controls'}, h('label', null, 'Health ', health), text), body);
  v1('/api/v1/targets', {state: 'active'}).then((r) => {
    data = r.data;
    draw();
  }).catch((e) => set(body, h('div', {class: 'error'}, e.message)));
}

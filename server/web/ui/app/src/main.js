// Vigil's UI: one page per path under the route prefix, drawn on the
// client from the JSON APIs.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import {h, set} from './dom.js';
import {PREFIX} from './api.js';
import * as query from './pages/query.js';
import * as targets from './pages/targets.js';
import * as rules from './pages/rules.js';
import * as alerts from './pages/alerts.js';
import * as silences from './pages/silences.js';
import * as status from './pages/status.js';
import * as llm from './pages/llm.js';

const PAGES = [
  ['/query', 'Query', query],
  ['/llm', 'LLM cluster', llm],
  ['/alerts', 'Alerts', alerts],
  ['/silences', 'Silences', silences],
  ['/targets', 'Targets', targets],
  ['/rules', 'Rules', rules],
  ['/status', 'Status', status],
];
const ALIASES = {'/': '/query', '/graph': '/query'};

const nav = h('nav', {class: 'top'});
const main = h('main', {id: 'page'});
let cleanup = null;

function current() {
  let p = location.pathname;
  if (PREFIX && p.startsWith(PREFIX)) p = p.slice(PREFIX.length);
  if (p === '') p = '/';
  return p;
}

function route() {
  let p = current();
  if (ALIASES[p]) {
    p = ALIASES[p];
    history.replaceState(null, '', PREFIX + p + location.search);
  }
  const page = PAGES.find(([path]) => path === p);
  set(nav, h('a', {class: 'brand', href: PREFIX + '/query', 'data-nav': ''}, 'Vigil'),
    PAGES.map(([path, title]) => h('a', {href: PREFIX + path, 'data-nav': '',
      class: path === p ? 'active' : ''}, title)));
  if (cleanup) {
    try { cleanup(); } catch (_) { /* page already gone */ }
    cleanup = null;
  }
  main.replaceChildren();
  if (!page) {
    set(main, h('h1', null, 'Not found'), h('p', null, `No page at ${p}.`));
    return;
  }
  document.title = `${page[1]} - Vigil`;
  cleanup = page[2].render(main) || null;
}

// In-app links (data-nav) change the page without a reload.
document.addEventListener('click', (e) => {
  const a = e.target.closest && e.target.closest('a[data-nav]');
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  history.pushState(null, '', a.getAttribute('href'));
  route();
});
window.addEventListener('popstate', route);

document.body.replaceChildren(nav, main);
route();

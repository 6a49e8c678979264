// The web UI in a real browser: a small vigil-sim fleet with 10 minutes of
// history, a real vigil (the LLM rule pack, the built-in Alertmanager),
// Debian's chromium driven by playwright-core. Every page is loaded and
// checked; no console error and no failed request may occur (but the 404s
// of the optional /api/v1/diagnose and /api/v1/alerts/feedback, which
// other builds may lack). Screenshots go to OUT/screenshots/.
//
//   node tests/ui/ui_test.mjs --vigil=BIN --sim=BIN --modules=NODE_MODULES \
//     --chromium=/usr/bin/chromium --out=DIR --root=REPO
// (tests/ui/run.sh passes these; CTest runs it as "ui: every page ...").
import {createRequire} from 'node:module';
import {mkdirSync, rmSync, readFileSync, writeFileSync} from 'node:fs';
import path from 'node:path';
import {freePort, start, stopAll, run, waitFor, getJSON, sleep} from './lib.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--([a-z]+)=(.*)$/.exec(a);
  return m ? [m[1], m[2]] : [a, ''];
}));
for (const k of ['vigil', 'sim', 'modules', 'chromium', 'out', 'root']) {
  if (!args[k]) {
    console.error(`ui_test.mjs: --${k}= is required`);
    process.exit(2);
  }
}
const {chromium} = createRequire(path.join(args.modules, 'noop.js'))('playwright-core');
const out = path.resolve(args.out);
const shots = path.join(out, 'screenshots');
const work = path.join(out, `run-${process.pid}`);
rmSync(shots, {recursive: true, force: true});
mkdirSync(shots, {recursive: true});
mkdirSync(work, {recursive: true});
const llm = path.join(args.root, 'examples/llm');
const t0 = Date.now();
const log = (...a) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

let failShot = null;  // screenshot of the page when a check fails
let passed = 0;
let failed = 0;
const failures = [];
async function check(name, fn) {
  const t = Date.now();
  try {
    await fn();
    passed++;
    log(`PASS ${name} (${Date.now() - t} ms)`);
  } catch (e) {
    failed++;
    failures.push(`${name}: ${e.message}`);
    if (failShot) await failShot(name).catch(() => {});
    log(`FAIL ${name}: ${e.stack || e.message}`);
  }
}
function expect(cond, what) {
  if (!cond) throw new Error(what);
}

// Optional endpoints: their 404 is an answer the UI handles, not a failure.
const OPTIONAL = [/\/api\/v1\/diagnose/, /\/api\/v1\/alerts\/feedback/];
const figures = {};

async function main() {
  // ---- the fleet: 10 minutes of history, then live ----
  const now = Math.floor(Date.now() / 1000);
  const sd = path.join(work, 'sd.json');
  const backfill = path.join(work, 'backfill.om');
  const sim = start([args.sim, '--hosts=2', '--engines=vllm-v1,sglang', '--gpus=2', '--ecc',
    '--trtllm-hosts=1', '--listen=127.0.0.1:0', `--sd-file=${sd}`, `--start=${now - 600}`,
    '--backfill=10m', '--backfill-step=15s', `--backfill-file=${backfill}`, '--live'],
  path.join(work, 'sim.log'));
  const control = await waitFor('vigil-sim control address', () => {
    const m = /control on ([0-9.:]+)/.exec(readFileSync(path.join(work, 'sim.log'), 'utf8'));
    if (sim.exitCodeSeen !== null) throw new Error(`vigil-sim exited ${sim.exitCodeSeen}`);
    return m && m[1];
  }, 90000);
  log(`vigil-sim live, control on ${control}`);
  // Faults that feed the panels with no data on a healthy fleet (the
  // dashboard test's FaultFed): gateway 5xx, and an XID (XidError fires).
  for (const f of [{kind: 'gateway-5xx', fraction: 0.2}, {kind: 'xid', host: 0, gpu: 1, code: 13}]) {
    const r = await fetch(`http://${control}/control/fault`, {method: 'POST', body: JSON.stringify(f)});
    expect(r.status === 201, `fault ${JSON.stringify(f)}: ${r.status}`);
  }
  const tsdb = path.join(work, 'tsdb');
  const rc = await run([args.vigil, 'tsdb', 'import', 'openmetrics', backfill, tsdb], path.join(work, 'import.log'));
  expect(rc === 0, `vigil tsdb import exited ${rc}: ${readFileSync(path.join(work, 'import.log'), 'utf8')}`);
  rmSync(backfill, {force: true});
  log('history imported');

  // ---- vigil: the rule pack at 1s, the built-in Alertmanager ----
  const port = await freePort();
  const sink = await freePort();  // nobody listens: notifications fail, alerts stay
  const base = `http://127.0.0.1:${port}`;
  writeFileSync(path.join(work, 'recording.yml'),
    readFileSync(path.join(llm, 'rules/recording.yml'), 'utf8').replace('\n    interval: 15s\n', '\n    interval: 1s\n'));
  writeFileSync(path.join(work, 'prometheus.yml'), [
    'global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', '  evaluation_interval: 1s',
    'rule_files:', `  - ${path.join(work, 'recording.yml')}`, `  - ${path.join(llm, 'rules/alerts.yml')}`,
    'scrape_configs:', '  - job_name: sim', '    file_sd_configs:', `      - files: ['${sd}']`,
    '  - job_name: vigil', '    static_configs:', `      - targets: ['127.0.0.1:${port}']`, ''].join('\n'));
  writeFileSync(path.join(work, 'alertmanager.yml'), [
    'route:', '  receiver: oncall', '  group_by: [alertname]', '  group_wait: 1s',
    'receivers:', '  - name: oncall', '    webhook_configs:', `      - url: 'http://127.0.0.1:${sink}/'`, ''].join('\n'));
  const vigil = start([args.vigil, `--config.file=${path.join(work, 'prometheus.yml')}`,
    `--storage.tsdb.path=${tsdb}`, `--alertmanager.config.file=${path.join(work, 'alertmanager.yml')}`,
    `--web.listen-address=127.0.0.1:${port}`], path.join(work, 'vigil.log'));
  await waitFor('vigil ready', async () => {
    if (vigil.exitCodeSeen !== null) throw new Error(`vigil exited ${vigil.exitCodeSeen}`);
    return (await fetch(`${base}/-/ready`)).ok;
  }, 60000);
  const q = (expr) => getJSON(`${base}/api/v1/query?query=${encodeURIComponent(expr)}`).then((j) => j.data.result);
  await waitFor('llm:* rules and the 5xx share have data', async () =>
    (await q('llm:kv_usage:1m')).length >= 2 && (await q('llm:tpot_p95:5m')).length >= 2 &&
    (await q('sum(rate(nginx_ingress_controller_requests{status=~"5.."}[1m]))')).length > 0 &&
    (await q('ALERTS{alertname="XidError",alertstate="firing"}')).length > 0, 60000, 500);
  log(`vigil ready at ${base}`);

  // ---- the browser ----
  const browser = await chromium.launch({executablePath: args.chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage']});
  const ctx = await browser.newContext({viewport: {width: 1400, height: 1000}});
  const page = await ctx.newPage();
  const problems = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const where = (m.location() && m.location().url) || '';
    if (OPTIONAL.some((re) => re.test(where)) && /404|405/.test(m.text())) return;
    problems.push(`console error: ${m.text()} (${where})`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.method()} ${r.url()}: ${r.failure() && r.failure().errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400 && !(OPTIONAL.some((re) => re.test(r.url())) && (r.status() === 404 || r.status() === 405))) {
      problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
    }
  });
  const shot = (name) => page.screenshot({path: path.join(shots, `${name}.png`), fullPage: true});
  failShot = (name) => shot(`FAILED-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  const noProblems = (where) => {
    const p = problems.splice(0);
    expect(p.length === 0, `${where}: ${p.join('; ')}`);
  };

  await check('query: type an expression, completion, graph, link reproduces the view', async () => {
    await page.goto(`${base}/`);
    await page.waitForURL(/\/query/);
    const ed = page.locator('#expr-editor .cm-content');
    await ed.click();
    await page.keyboard.type('llm:kv_us');
    const opt = page.locator('.cm-tooltip-autocomplete li', {hasText: 'llm:kv_usage:1m'});
    await opt.first().waitFor({timeout: 10000});
    await page.keyboard.press('Escape');
    await page.keyboard.type('age:1m');
    await page.keyboard.press('Enter');
    await page.locator('#query-chart canvas').first().waitFor({timeout: 10000});
    const n = Number(await page.locator('.result').getAttribute('data-series'));
    expect(n >= 2, `graph shows ${n} series, want >= 2 (one per engine)`);
    expect(page.url().includes('expr=llm%3Akv_usage%3A1m') && page.url().includes('tab=graph'), `URL ${page.url()} lacks the view`);
    // Hover shows values; a legend click hides a series.
    const box = await page.locator('#query-chart .u-over').boundingBox();
    // (The llm:* series start with this vigil: hover from the right edge.)
    let rows = 0;
    for (let dx = 2; dx < box.width && rows === 0; dx += 4) {
      await page.mouse.move(box.x + box.width - dx, box.y + box.height / 2);
      rows = await page.locator('#query-chart .tooltip .tiprow').count();
    }
    expect(rows >= 2, `hover shows ${rows} values, want one per series`);
    await page.locator('#query-chart .legenditem').first().click();
    expect(await page.locator('#query-chart .legenditem.off').count() === 1, 'legend click did not toggle');
    await shot('query-graph');
    // The same URL in a fresh page draws the same view.
    const url = page.url();
    const p2 = await ctx.newPage();
    await p2.goto(url);
    await p2.locator('#query-chart canvas').first().waitFor({timeout: 10000});
    expect(Number(await p2.locator('.result').getAttribute('data-series')) === n, 'reloaded link shows another result');
    await p2.close();
    // Table tab, and stacked.
    await page.click('#tab-table');
    await page.locator('#query-table tbody tr').first().waitFor({timeout: 10000});
    await page.click('#tab-graph');
    await page.check('#stacked');
    await page.locator('#query-chart canvas').first().waitFor();
    expect(page.url().includes('stacked=1'), 'stacked not in URL');
    noProblems('query');
  });

  await check('query: a parse error is marked in place and the API error shown', async () => {
    await page.goto(`${base}/query`);
    await page.locator('#expr-editor .cm-content').click();
    // (closeBrackets would balance an open paren: a dangling operator.)
    await page.keyboard.type('sum(up) + ');
    await page.locator('.cm-lintRange-error, .cm-lintPoint-error').first().waitFor({state: 'attached', timeout: 10000});
    await page.keyboard.press('Escape');
    await page.click('#execute');
    await page.locator('#query-error').waitFor({timeout: 10000});
    const text = await page.locator('#query-error').innerText();
    expect(/parse error|unclosed|expected/i.test(text), `error text: ${text}`);
    await shot('query-parse-error');
    // The 400 of the bad query is the API's answer, shown: not a failure.
    const rest = problems.splice(0).filter((p) => !(/400/.test(p) && /\/api\/v1\/query_range/.test(p)));
    problems.push(...rest);
    noProblems('query error');
  });

  await check('query: 500 series x 1000 points stay responsive', async () => {
    // 500 real series of the fleet (DCGM, node, engines), 1000 steps.
    const all = await getJSON(`${base}/api/v1/query?query=${encodeURIComponent('count({__name__=~".+"})')}`);
    const total = Number(all.data.result[0].value[1]);
    expect(total >= 500, `the fleet has ${total} series, want >= 500`);
    const end = Math.floor(Date.now() / 1000);
    const range = 600;
    // Every DCGM and vLLM series of the fleet: about 550.
    const big = '{__name__=~"DCGM_.+|vllm:.+"}';
    const t = Date.now();
    await page.goto(`${base}/query?${new URLSearchParams({expr: big, tab: 'graph', range: `${range}s`,
      end: String(end), step: '0.6'})}`);
    await page.locator('#query-chart canvas').first().waitFor({timeout: 30000});
    const loadMs = Date.now() - t;
    const n = Number(await page.locator('.result').getAttribute('data-series'));
    expect(n >= 500 && n <= 700, `${n} series drawn, want about 550`);
    const info = await page.locator('.result p.muted').innerText();
    // Hover: 40 moves across the plot, each answered within a frame or so.
    const box = await page.locator('#query-chart .u-over').boundingBox();
    const moves = await page.evaluate(async ({x, y, w}) => {
      const el = document.querySelector('#query-chart .u-over');
      const t1 = performance.now();
      for (let i = 0; i < 40; i++) {
        el.dispatchEvent(new MouseEvent('mousemove', {clientX: x + (w * i) / 40, clientY: y, bubbles: true}));
        await new Promise((r) => requestAnimationFrame(() => r()));
      }
      return (performance.now() - t1) / 40;
    }, {x: box.x + 5, y: box.y + box.height / 2, w: box.width - 10});
    const t2 = Date.now();
    await page.locator('#query-chart .legenditem').nth(3).click();
    await page.locator('#query-chart .legenditem.off').first().waitFor();
    const toggleMs = Date.now() - t2;
    figures.big = {series: n, info, loadMs, hoverMsPerMove: Math.round(moves * 10) / 10, toggleMs};
    log(`500-series graph: ${JSON.stringify(figures.big)}`);
    expect(moves < 100, `hover takes ${moves} ms per move`);
    expect(toggleMs < 2000, `legend toggle took ${toggleMs} ms`);
    await shot('query-500-series');
    noProblems('500 series');
  });

  await check('targets: per job, health, filters', async () => {
    await page.goto(`${base}/targets`);
    await page.locator('table.targets').first().waitFor({timeout: 10000});
    const jobs = await page.locator('table.targets').evaluateAll((ts) => ts.map((t) => t.dataset.job));
    for (const j of ['vllm', 'sglang', 'dcgm-exporter', 'gateway', 'vigil', 'trtllm']) expect(jobs.includes(j), `job ${j} missing: ${jobs}`);
    await shot('targets');
    await page.selectOption('#health-filter', 'down');
    await page.waitForFunction(() => [...document.querySelectorAll('table.targets')].every((t) => t.dataset.job === 'trtllm'));
    expect(await page.locator('table.targets tbody tr').count() >= 1, 'the TRT-LLM engine (no /metrics) is not listed as down');
    expect((await page.locator('table.targets .errtext').first().innerText()).length > 0, 'down target without its error');
    await page.selectOption('#health-filter', 'all');
    await page.fill('#text-filter', 'dcgm');
    await page.waitForFunction(() => [...document.querySelectorAll('table.targets')].every((t) => t.dataset.job === 'dcgm-exporter'));
    noProblems('targets');
  });

  await check('rules: groups, health, expression linked to Query', async () => {
    await page.goto(`${base}/rules`);
    await page.locator('table.rules').first().waitFor({timeout: 10000});
    const text = await page.locator('main').innerText();
    for (const g of ['llm-recording', 'llm:kv_usage:1m', 'XidError']) expect(text.includes(g), `${g} not shown`);
    await shot('rules');
    await page.locator('a.expr', {hasText: 'vllm:kv_cache_usage_perc'}).first().click();
    await page.waitForURL(/\/query\?.*expr=/);
    await page.locator('#query-chart canvas').first().waitFor({timeout: 10000});
    noProblems('rules');
  });

  let xidLabels = null;
  await check('alerts: firing with receiver, feedback button', async () => {
    await page.goto(`${base}/alerts`);
    const row = page.locator('#alerts-table tr', {hasText: 'XidError'}).first();
    await row.waitFor({timeout: 15000});
    const text = await row.innerText();
    expect(/firing/.test(text), `XidError row: ${text}`);
    expect(/oncall/.test(text), `XidError row lacks its receiver: ${text}`);
    // The feedback request carries what the brief's endpoint takes.
    const sent = page.waitForRequest((r) => r.url().includes('/api/v1/alerts/feedback') && r.method() === 'POST');
    await row.locator('input').fill('known flaky GPU');
    await row.locator('button.fb-no').click();
    const body = JSON.parse((await sent).postData());
    expect(body.labels && body.labels.alertname === 'XidError', `feedback labels: ${JSON.stringify(body)}`);
    expect(body.actionable === false && body.comment === 'known flaky GPU', `feedback body: ${JSON.stringify(body)}`);
    expect(/^[0-9a-f]{16}$/.test(body.fingerprint) && !isNaN(Date.parse(body.startsAt)), `fingerprint/startsAt: ${JSON.stringify(body)}`);
    await page.waitForFunction(() => /recorded|not available|failed/.test(document.querySelector('.fbstatus').textContent));
    const fb = await row.locator('.fbstatus').innerText();
    expect(/recorded: not actionable|not available in this build/.test(fb), `feedback said: ${fb}`);
    figures.feedback = fb;
    const v2 = await getJSON(`${base}/api/v2/alerts`);
    xidLabels = v2.find((a) => a.labels.alertname === 'XidError').labels;
    await shot('alerts');
    noProblems('alerts');
  });

  await check('silences: create (now and in the future), silenced alert, expire', async () => {
    await page.goto(`${base}/silences`);
    await page.fill('#silence-matchers', `alertname="XidError", gpu="${xidLabels ? xidLabels.gpu : '1'}"`);
    await page.fill('#silence-creator', 'ui-test');
    await page.fill('#silence-comment', 'drained');
    await page.fill('#silence-duration', '1h');
    await page.click('#silence-create');
    await page.locator('#silence-created').waitFor({timeout: 10000});
    const id = /Silence (\S+) created/.exec(await page.locator('#silence-created').innerText())[1];
    await page.locator(`#silences-table tr[data-id="${id}"]`).waitFor();
    expect(/active/.test(await page.locator(`tr[data-id="${id}"]`).innerText()), 'new silence not active');
    // A silence that starts tomorrow is pending.
    const tomorrow = new Date(Date.now() + 86400e3);
    const p = (n) => String(n).padStart(2, '0');
    await page.fill('#silence-start', `${tomorrow.getFullYear()}-${p(tomorrow.getMonth() + 1)}-${p(tomorrow.getDate())}T10:00`);
    await page.fill('#silence-matchers', 'alertname=~"GPUTempHigh|GpuThrottling"');
    await page.fill('#silence-comment', 'maintenance tomorrow');
    await page.click('#silence-create');
    await page.waitForFunction(() => document.querySelectorAll('#silences-table tr.silence-pending').length === 1);
    await shot('silences');
    // The alert shows as silenced.
    await page.goto(`${base}/alerts`);
    await page.locator('#alerts-table tr.alert-silenced', {hasText: 'XidError'}).first().waitFor({timeout: 15000});
    // Expire it.
    await page.goto(`${base}/silences`);
    await page.locator(`tr[data-id="${id}"] button.expire`).click();
    await page.waitForFunction((sid) => !document.querySelector(`tr[data-id="${sid}"]`), id);
    const s = await getJSON(`${base}/api/v2/silence/${id}`);
    expect(s.status.state === 'expired', `silence state after expiry: ${s.status.state}`);
    noProblems('silences');
  });

  await check('status: build, flags, config, TSDB cardinality', async () => {
    await page.goto(`${base}/status`);
    await page.locator('#top-metrics tbody tr').first().waitFor({timeout: 10000});
    await page.locator('table.kv th', {hasText: 'version'}).first().waitFor({timeout: 10000});
    await page.locator('table.kv th', {hasText: 'storageRetention'}).first().waitFor({timeout: 10000});
    expect((await page.locator('#top-metrics tbody tr').count()) >= 10, 'fewer than 10 top metrics');
    expect((await page.locator('#top-pairs tbody tr').count()) >= 5, 'no label pairs');
    await page.locator('details.section summary', {hasText: 'Configuration'}).click();
    expect(/scrape_configs/.test(await page.locator('pre.config').innerText()), 'config not shown');
    await shot('status');
    noProblems('status');
  });

  await check('llm board: every chart has data, paints within a second, diagnosis', async () => {
    const t = Date.now();
    await page.goto(`${base}/llm`);
    await page.waitForFunction(() => document.querySelector('#llm-board') &&
      document.querySelector('#llm-board').dataset.loaded, null, {timeout: 20000});
    const wall = Date.now() - t;
    const inPage = Number(await page.locator('#llm-board').getAttribute('data-loaded-ms'));
    const fcp = await page.evaluate(() => Math.round((performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || -1));
    const states = await page.locator('[data-panel]').evaluateAll((ps) => ps.map((p) => [p.dataset.panel, p.dataset.state, p.innerText.slice(0, 200)]));
    figures.llm = {panels: states.length, firstContentfulPaintMs: fcp, allPanelsDrawnMs: wall, queriesMs: inPage};
    log(`llm board: ${JSON.stringify(figures.llm)}`);
    const bad = states.filter(([, s]) => s !== 'data');
    expect(states.length >= 25, `only ${states.length} panels`);
    expect(bad.length === 0, `panels without data: ${bad.map(([id, s, txt]) => `${id}=${s} (${txt.replace(/\s+/g, ' ')})`).join('; ')}`);
    // The goal is every panel within a second (measured: about 0.5 s
    // here, 0.8-1 s against the full demo on a loaded 2-core machine);
    // the bound leaves room for CI running other tests beside this one.
    expect(fcp > 0 && fcp < 1000, `first contentful paint at ${fcp} ms, want < 1000`);
    expect(wall < 3000, `board took ${wall} ms to draw every panel, want < 3000`);
    const diag = await page.locator('#llm-diagnosis').innerText();
    expect(/diagnose not available in this build|No finding|Evidence|finding/i.test(diag) ||
      (await page.locator('#llm-diagnosis .finding').count()) > 0, `diagnosis panel: ${diag}`);
    figures.diagnosis = diag.replace(/\s+/g, ' ').slice(0, 200);
    if (/not available in this build/.test(diag)) {
      // Until /api/v1/diagnose lands: the panel renders the agreed shape
      // (one finding with evidence and next steps, missing data) and
      // survives fields of the wrong type. Served by the test, not vigil.
      await page.route('**/api/v1/diagnose**', (route) => route.fulfill({status: 200, contentType: 'application/json',
        body: JSON.stringify({status: 'success', data: {findings: [
          {cause: 'decode-bound', severity: 'warning', variant: 'vllm-v1', instance: 'i1', summary: 'TPOT high, TTFT normal',
            evidence: ['llm:tpot_p95:5m 0.14 > 0.1'], next: ['batch occupancy', 'KV cache']},
          {cause: 42, severity: null, evidence: 'not a list', next: [{x: 1}]}],
        missing: ['DCGM_FI_DEV_ECC_DBE_AGG_TOTAL: ECC fields not enabled']}})}));
      await page.click('button:has-text("Refresh")');
      await page.locator('#llm-diagnosis .finding').nth(1).waitFor({timeout: 10000});
      const d = await page.locator('#llm-diagnosis').innerText();
      for (const want of ['decode-bound', 'TPOT high, TTFT normal', 'llm:tpot_p95:5m 0.14 > 0.1', 'batch occupancy', 'ECC fields not enabled']) {
        expect(d.includes(want), `diagnosis panel lacks "${want}": ${d}`);
      }
      await shot('llm-diagnosis-shape');
      await page.unroute('**/api/v1/diagnose**');
    }
    // XID in red, decoded throttle reasons present.
    expect((await page.locator('[data-panel="xid"] tr.rowbad').count()) >= 1, 'XID 13 not in red');
    await shot('llm');
    // A refresh redraws the panels in place (the same elements, no
    // blank board in between).
    const before = await page.locator('#llm-board').getAttribute('data-loaded');
    await page.evaluate(() => { document.querySelector('[data-panel="kv"]').vigilMark = 1; });
    await page.click('button:has-text("Refresh")');
    await page.waitForFunction((b) => document.querySelector('#llm-board').dataset.loaded !== b, before);
    expect(await page.evaluate(() => document.querySelector('[data-panel="kv"]').vigilMark === 1 &&
      document.querySelector('[data-panel="kv"]').dataset.state === 'data' &&
      document.querySelectorAll('[data-panel="kv"] canvas').length === 1), 'refresh rebuilt the KV panel or left it empty');
    // Per variant.
    await page.selectOption('#llm-variant', 'sglang');
    await page.waitForFunction(() => new URLSearchParams(location.search).get('variant') === 'sglang');
    await page.waitForFunction(() => document.querySelector('[data-panel="kv"]').dataset.state === 'data', null, {timeout: 10000});
    expect(Number(await page.locator('[data-panel="kv"]').getAttribute('data-series')) === 1, 'variant filter: KV panel not one series');
    await shot('llm-sglang');
    noProblems('llm');
  });

  await check('route prefix: a vigil under --web.route-prefix=/vigil', async () => {
    const port2 = await freePort();
    writeFileSync(path.join(work, 'empty.yml'), 'global:\n  scrape_interval: 1s\n');
    const v2 = start([args.vigil, `--config.file=${path.join(work, 'empty.yml')}`,
      `--storage.tsdb.path=${path.join(work, 'tsdb2')}`, '--web.route-prefix=/vigil',
      `--web.listen-address=127.0.0.1:${port2}`], path.join(work, 'vigil2.log'));
    const b2 = `http://127.0.0.1:${port2}`;
    await waitFor('prefixed vigil ready', async () => {
      if (v2.exitCodeSeen !== null) throw new Error(`vigil exited ${v2.exitCodeSeen}`);
      return (await fetch(`${b2}/vigil/-/ready`)).ok;
    }, 30000);
    await page.goto(`${b2}/`);
    await page.waitForURL(`${b2}/vigil/query`);
    await page.locator('#expr-editor .cm-content').click();
    await page.keyboard.type('vector(1)');
    await page.keyboard.press('Enter');
    await page.locator('#query-chart canvas').first().waitFor({timeout: 10000});
    expect(page.url().startsWith(`${b2}/vigil/query?expr=vector`), `URL ${page.url()}`);
    await page.click('nav a:has-text("Status")');
    await page.waitForURL(`${b2}/vigil/status`);
    await page.locator('table.kv th', {hasText: 'version'}).first().waitFor({timeout: 10000});
    // The Status page's other requests (runtimeinfo, flags...) may still be
    // in flight: leaving now would abort them (net::ERR_ABORTED, a failed
    // request to the listener above).
    await page.waitForLoadState('networkidle');
    await page.goto(`${b2}/vigil/llm`);
    await page.waitForFunction(() => document.querySelector('#llm-board').dataset.loaded, null, {timeout: 10000});
    // No data here: the panels say so, none errs.
    const st = await page.locator('[data-panel]').evaluateAll((ps) => ps.map((x) => x.dataset.state));
    expect(!st.includes('error') && st.includes('empty'), `panel states without data: ${st}`);
    // The Alertmanager is off here: the Alerts page says so.
    await page.goto(`${b2}/vigil/alerts`);
    await page.locator('#am-off').waitFor({timeout: 10000});
    await shot('prefix-alerts-am-off');
    const rest = problems.splice(0).filter((p) => !(/404/.test(p) && /\/vigil\/api\/v2\/alerts/.test(p)));
    problems.push(...rest);
    noProblems('route prefix');
  });

  await check('no-UI paths: unknown asset 404, API untouched', async () => {
    const r = await fetch(`${base}/assets/nope.js`);
    expect(r.status === 404, `unknown asset: ${r.status}`);
    const b = await fetch(`${base}/api/v1/status/buildinfo`);
    expect(b.ok, 'API broken');
  });

  await browser.close();
}

try {
  await main();
} catch (e) {
  failed++;
  failures.push(`setup: ${e.stack || e.message}`);
  log(`FAIL setup: ${e.stack || e.message}`);
} finally {
  await stopAll();
}
writeFileSync(path.join(out, 'figures.json'), JSON.stringify(figures, null, 2) + '\n');
log(`screenshots in ${shots}; logs in ${work}`);
if (failures.length) console.log(`failures:\n  ${failures.join('\n  ')}`);
console.log(`${passed} passed, ${failed} failed`);
if (failed === 0) rmSync(work, {recursive: true, force: true});
process.exit(failed === 0 ? 0 : 1);

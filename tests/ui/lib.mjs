// Helpers of ui_test.mjs: free ports, processes that are always stopped,
// HTTP polling.
import {spawn} from 'node:child_process';
import {createServer} from 'node:net';
import {openSync} from 'node:fs';

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => resolve(port));
    });
  });
}

const children = [];

// Starts `argv`, output to `log`; stopped by stopAll() (by its pid).
export function start(argv, log, opts = {}) {
  const fd = openSync(log, 'a');
  const p = spawn(argv[0], argv.slice(1), {stdio: ['ignore', fd, fd], ...opts});
  p.exitCodeSeen = null;
  p.on('exit', (code, sig) => { p.exitCodeSeen = code ?? sig; });
  children.push(p);
  return p;
}

export async function stopAll() {
  for (const p of children.reverse()) {
    if (p.exitCodeSeen !== null) continue;
    p.kill('SIGTERM');
    const deadline = Date.now() + 10000;
    while (p.exitCodeSeen === null && Date.now() < deadline) await sleep(100);
    if (p.exitCodeSeen === null) p.kill('SIGKILL');
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function run(argv, log) {
  return new Promise((resolve) => {
    const fd = openSync(log, 'a');
    const p = spawn(argv[0], argv.slice(1), {stdio: ['ignore', fd, fd]});
    p.on('exit', (code) => resolve(code));
  });
}

// Polls until fn() returns a truthy value (exceptions count as falsy).
export async function waitFor(what, fn, ms = 30000, every = 250) {
  const deadline = Date.now() + ms;
  let last = null;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(every);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

export async function getJSON(url, init) {
  const r = await fetch(url, init);
  if (!r.ok) throw new Error(`${url}: ${r.status}`);
  return r.json();
}

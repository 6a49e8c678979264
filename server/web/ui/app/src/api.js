// The JSON APIs, under the route prefix the server wrote into index.html.

export const PREFIX = (window.__VIGIL__ && window.__VIGIL__.prefix) || '';

export function url(path, params) {
  let u = PREFIX + path;
  if (params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined || v === null || v === '') continue;
      for (const one of Array.isArray(v) ? v : [v]) q.append(k, one);
    }
    const s = q.toString();
    if (s) u += '?' + s;
  }
  return u;
}

export class ApiError extends Error {
  constructor(message, status, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

// Fetches JSON; resolves with the parsed body of a 2xx answer, rejects with
// an ApiError that says what failed (the API's own "error" when it has one).
export async function request(method, path, params, body) {
  const init = {method, headers: {}};
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  let resp;
  try {
    resp = await fetch(url(path, params), init);
  } catch (e) {
    throw new ApiError(`${method} ${path}: ${e.message}`, 0, null);
  }
  const text = await resp.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch (_) {
    json = null;
  }
  if (!resp.ok) {
    const why = (json && (json.error || json.message)) || text.trim() || resp.statusText;
    throw new ApiError(`${method} ${path}: ${resp.status} ${why}`, resp.status, json);
  }
  return json;
}

export const get = (path, params) => request('GET', path, params);

// GET of a Prometheus v1 endpoint: returns {data, warnings, infos}.
export async function v1(path, params) {
  const j = await get(path, params);
  if (!j || j.status !== 'success') {
    throw new ApiError(`${path}: ${(j && j.error) || 'unexpected answer'}`, 200, j);
  }
  return {data: j.data, warnings: j.warnings || [], infos: j.infos || []};
}

// POST form-encoded, as Prometheus's UI sends queries (long queries fit).
export async function v1Post(path, params) {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') form.append(k, v);
  let resp;
  try {
    resp = await fetch(url(path), {
      method: 'POST',
      headers: {'Content-Type': 'application/x-www-form-urlencoded'},
      body: form,
    });
  } catch (e) {
    throw new ApiError(`${path}: ${e.message}`, 0, null);
  }
  const text = await resp.text();
  let j = null;
  try {
    j = JSON.parse(text);
  } catch (_) { /* not JSON */ }
  if (!resp.ok || !j || j.status !== 'success') {
    throw new ApiError((j && j.error) || `${resp.status} ${text.trim()}`, resp.status, j);
  }
  return {data: j.data, warnings: j.warnings || [], infos: j.infos || []};
}

export const query = (q, time) => v1Post('/api/v1/query', {query: q, time});
export const queryRange = (q, start, end, step) =>
  v1Post('/api/v1/query_range', {query: q, start, end, step});

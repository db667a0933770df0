// The Hourglass web console: reads /api/v1 on the node that served it, redraws every 2 s.
// Data only ever reaches the page as text nodes (h() below), never as HTML.
'use strict';

const REFRESH_MS = 2000;
const HISTORY = 300; // rate samples kept: 10 minutes at one per refresh
const PAGE = 50;
const state = {
  token: sessionStorage.getItem('hourglass.token'),
  info: null,
  rates: [],
  route: null,
  content: null,
  drawn: null, // what the content shows now, as HTML: a refresh that would draw the same leaves it
  busy: false,
};

class ApiError extends Error {
  constructor(body, status) {
    super(body.message || body.error || ('HTTP ' + status));
    this.code = body.error;
    this.status = status;
  }
}

// ---- DOM helpers

function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  setAll(e, attrs, kids);
  return e;
}

function s(tag, attrs, ...kids) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  setAll(e, attrs, kids);
  return e;
}

function setAll(e, attrs, kids) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') {
      e.setAttribute('class', v);
    } else if (k.startsWith('on')) {
      e.addEventListener(k.slice(2), v);
    } else if (v !== null && v !== undefined && v !== false) {
      e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const k of kids.flat()) {
    if (k !== null && k !== undefined && k !== false) {
      e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
  }
}

const num = (v) => Number(v || 0);
const fmt = (v) => num(v).toLocaleString('en-US');
const link = (hash, text) => h('a', { href: hash }, text);

function time(ms) {
  const n = num(ms);
  return n ? new Date(n).toLocaleTimeString('en-GB') : '';
}

function dateTime(ms) {
  const n = num(ms);
  return n ? new Date(n).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '';
}

function ago(ms) {
  const n = num(ms);
  if (!n) {
    return '';
  }
  const s = Math.max(0, Math.round((Date.now() - n) / 1000));
  return s < 120 ? s + ' s ago' : Math.round(s / 60) + ' min ago';
}

function duration(ms) {
  const n = num(ms);
  if (n < 1000) {
    return n + ' ms';
  }
  if (n < 120000) {
    return (n / 1000).toFixed(1) + ' s';
  }
  return Math.round(n / 60000) + ' min';
}

function payloadText(b64) {
  if (!b64) {
    return '';
  }
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text)) {
    return '(' + bytes.length + ' bytes, binary)';
  }
  return text.length > 80 ? text.slice(0, 80) + '…' : text;
}

function table(headers, rows, empty) {
  if (rows.length === 0) {
    return h('p', { class: 'muted' }, empty || 'None.');
  }
  return h('table', {},
    h('thead', {}, h('tr', {}, headers.map((c) => h('th', { class: c.num ? 'num' : null }, c.label || c)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((cell, i) =>
      h('td', { class: headers[i].num ? 'num' : null }, cell))))));
}

const col = (label) => ({ label, num: true });

function card(label, value, cls) {
  return h('div', { class: 'card' }, h('div', { class: 'value ' + (cls || '') }, value), h('div', { class: 'label' }, label));
}

// ---- API

async function api(path, params, method) {
  const url = new URL('/api/v1' + path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '') {
      url.searchParams.set(k, v);
    }
  }
  const headers = { Accept: 'application/json' };
  if (state.token) {
    headers.Authorization = 'Bearer ' + state.token;
  }
  const response = await fetch(url, { method: method || 'GET', headers, cache: 'no-store' });
  const body = await response.json().catch(() => ({ error: 'INTERNAL', message: 'not JSON (HTTP ' + response.status + ')' }));
  if (response.status === 401) {
    showSignIn(state.token ? 'That token was refused: ' + body.message : null);
  }
  if (!response.ok) {
    throw new ApiError(body, response.status);
  }
  return body;
}

// ---- sign-in and banner

function showSignIn(message) {
  document.getElementById('signin').hidden = false;
  document.getElementById('signin-error').textContent = message || '';
  document.getElementById('page').replaceChildren();
}

async function loadInfo() {
  try {
    state.info = await api('/info');
  } catch (e) {
    if (e.status !== 401) {
      document.getElementById('page').replaceChildren(h('p', { class: 'error' }, 'Cannot reach the node: ' + e.message));
    }
    return false;
  }
  document.getElementById('signin').hidden = true;
  const banner = document.getElementById('banner');
  banner.hidden = state.info.securityEnabled;
  banner.textContent = state.info.securityEnabled ? '' : 'Security is off on this cluster: anyone who can reach '
    + 'its ports can read every message and administer it, from this console too.';
  document.getElementById('whoami').textContent = 'node ' + state.info.node
    + (state.info.shards > 1 ? ' · ' + state.info.shards + ' shards' : '')
    + (state.info.principal ? ' · signed in as ' + state.info.principal : '');
  document.getElementById('signout').hidden = !state.token;
  return true;
}

// ---- actions

function confirmAction(text, action, done) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  dialog.returnValue = '';
  dialog.onclose = async () => {
    if (dialog.returnValue !== 'ok') {
      return;
    }
    try {
      const result = await action();
      showResult(done(result), false);
    } catch (e) {
      showResult('Failed: ' + e.message, true);
    }
    refresh();
  };
  dialog.showModal();
}

function showResult(text, failed) {
  const box = document.getElementById('result');
  box.hidden = false;
  box.className = 'result ' + (failed ? 'error' : 'ok');
  box.textContent = text;
  clearTimeout(showResult.timer);
  showResult.timer = setTimeout(() => { box.hidden = true; }, 8000);
}

// ---- pages: each has a toolbar built once per visit and a body redrawn on every refresh

function pager(offset, total, go) {
  const last = Math.min(offset + PAGE, total);
  return h('div', { class: 'pager' },
    h('button', { type: 'button', id: 'prev', disabled: offset === 0, onclick: () => go(Math.max(0, offset - PAGE)) }, '‹ Previous'),
    h('span', { id: 'range' }, total === 0 ? 'none' : (offset + 1) + '–' + last + ' of ' + fmt(total)),
    h('button', { type: 'button', id: 'next', disabled: last >= total, onclick: () => go(offset + PAGE) }, 'Next ›'));
}

function rateChart(samples) {
  const w = 640;
  const hgt = 120;
  const svg = s('svg', { class: 'chart', width: w, height: hgt, viewBox: '0 0 ' + w + ' ' + hgt, role: 'img',
    'aria-label': 'publish, delivery and ack rates' });
  if (samples.length < 2) {
    svg.append(s('text', { x: 10, y: 20 }, 'Rates appear after two refreshes.'));
    return svg;
  }
  const max = Math.max(1, ...samples.map((p) => Math.max(p.pub, p.del, p.ack)));
  const x = (i) => 30 + (i / (HISTORY - 1)) * (w - 40);
  const y = (v) => hgt - 15 - (v / max) * (hgt - 30);
  const offset = HISTORY - samples.length;
  for (const [key, cls] of [['pub', 'line-pub'], ['del', 'line-del'], ['ack', 'line-ack']]) {
    const d = samples.map((p, i) => (i ? 'L' : 'M') + x(i + offset).toFixed(1) + ' ' + y(p[key]).toFixed(1)).join(' ');
    svg.append(s('path', { class: cls, d }));
  }
  svg.append(s('line', { class: 'axis', x1: 30, y1: hgt - 15, x2: w - 10, y2: hgt - 15 }));
  svg.append(s('text', { x: 2, y: 14 }, Math.round(max) + '/s'));
  svg.append(s('text', { x: 30, y: hgt - 2 }, '10 min ago'));
  svg.append(s('text', { x: w - 40, y: hgt - 2 }, 'now'));
  return svg;
}

function recordRates(members) {
  const t = Date.now();
  const total = { pub: 0, del: 0, ack: 0 };
  for (const m of members) {
    total.pub += num(m.node.publishedTotal);
    total.del += num(m.node.deliveredTotal);
    total.ack += num(m.node.ackedTotal);
  }
  const prev = state.lastTotals;
  state.lastTotals = { t, ...total };
  if (prev) {
    const secs = Math.max(0.001, (t - prev.t) / 1000);
    const rate = (k) => Math.max(0, (total[k] - prev[k]) / secs);
    state.rates.push({ pub: rate('pub'), del: rate('del'), ack: rate('ack') });
    if (state.rates.length > HISTORY) {
      state.rates.shift();
    }
  }
}

const pages = {
  cluster: {
    title: () => 'Cluster',
    async body() {
      const c = await api('/cluster');
      recordRates(c.members.filter((m) => m.up));
      const nodes = new Set(c.members.map((m) => m.node.id));
      const up = new Set(c.members.filter((m) => m.up).map((m) => m.node.id));
      const latest = state.rates[state.rates.length - 1] || { pub: 0, del: 0, ack: 0 };
      const shards = new Set(c.members.map((m) => m.node.shard));
      const rows = c.members.map((m) => {
        const n = m.node;
        const canLead = m.up && n.shard === 0 && n.role !== 'LEADER';
        const row = [n.id, String(n.shard), n.role || '', fmt(n.term), fmt(n.commitIndex),
          fmt(n.appliedIndex), m.up ? fmt(m.lag) : '', m.up && num(m.lastContactMs) >= 0 ? duration(m.lastContactMs) : '',
          m.up ? h('span', { class: 'ok' }, 'up') : h('span', { class: 'error' }, m.error || 'down'),
          n.ready ? 'ready' : (m.up ? 'not ready' : ''), m.stalled ? h('span', { class: 'error' }, 'stalled') : '',
          canLead ? h('button', { type: 'button', class: 'transfer', 'data-node': n.id, onclick: () => confirmAction(
            'Transfer the leadership to ' + n.id + '?', () => api('/cluster/transfer', { to: n.id }, 'POST'),
            (r) => 'Leadership moved; leader now ' + (r.leaderId || 'being elected') + '.') }, 'Make leader') : ''];
        return shards.size > 1 ? row : row.filter((cell, i) => i !== 1); // one shard: no shard column
      });
      const headers = ['node', 'shard', 'role', col('term'), col('commit'), col('applied'), col('lag'), 'last contact', 'up',
        'ready', 'stalled', ''];
      return [
        h('div', { class: 'cards' },
          card('nodes up', up.size + ' / ' + nodes.size, up.size === nodes.size ? 'ok' : 'error'),
          card('leader' + (shards.size > 1 ? ' of shard 0' : ''), c.leaderId || 'none'),
          (c.metadataMembers || []).length ? card('metadata leader', c.metadataLeaderId || 'none') : null,
          card('quorum', c.hasQuorum ? 'yes' : 'no', c.hasQuorum ? 'ok' : 'error'),
          card('published / s', latest.pub.toFixed(1)),
          card('delivered / s', latest.del.toFixed(1)),
          card('acked / s', latest.ack.toFixed(1))),
        h('h2', {}, 'Rates over the last minutes'),
        h('div', { class: 'legend' }, h('span', { class: 'key-pub' }, '— published'),
          h('span', { class: 'key-del' }, '— delivered'), h('span', { class: 'key-ack' }, '— acked'),
          h('span', { class: 'muted' }, 'whole cluster, since this page opened')),
        rateChart(state.rates),
        h('h2', {}, 'Members'),
        table(shards.size > 1 ? headers : headers.filter((c, i) => i !== 1), rows),
      ];
    },
  },

  topics: {
    title: () => 'Topics',
    toolbar(params) {
      const input = h('input', { id: 'prefix', type: 'search', placeholder: 'name starts with…', value: params.get('prefix') || '' });
      input.addEventListener('input', () => {
        clearTimeout(input.timer);
        input.timer = setTimeout(() => navigate('#/topics', { prefix: input.value }), 300);
      });
      return h('div', { class: 'pager' }, h('label', {}, 'Filter ', input));
    },
    async body(params) {
      const offset = num(params.get('offset'));
      const prefix = params.get('prefix') || '';
      const r = await api('/topics', { offset, limit: PAGE, prefix });
      const go = (o) => navigate('#/topics', { prefix, offset: o });
      const rows = r.topics.map((t) => [link('#/topic/' + encodeURIComponent(t.topic), t.topic), fmt(t.pending),
        fmt(t.dueNow), fmt(t.dueWithin1m), fmt(t.dueWithin1h), fmt(t.dueWithin1d), fmt(t.inFlight),
        String(t.groups.length), String(t.consumers), num(t.oldestDueLatenessMs) ? duration(t.oldestDueLatenessMs) : '']);
      return [pager(offset, num(r.total), go),
        table(['topic', col('pending'), col('due now'), col('≤ 1 min'), col('≤ 1 h'), col('≤ 1 day'), col('in flight'),
          col('groups'), col('consumers'), 'oldest due for'], rows, 'No topics' + (prefix ? ' start with that' : '') + '.')];
    },
  },

  topic: {
    title: (name) => 'Topic ' + name,
    toolbar(params, name) {
      const select = h('select', { id: 'bucket' },
        [['1000', '1 s buckets'], ['60000', '1 min buckets'], ['3600000', '1 h buckets']].map(([v, text]) =>
          h('option', { value: v, selected: (params.get('bucket') || '60000') === v }, text)));
      select.addEventListener('change', () => navigate('#/topic/' + encodeURIComponent(name), { bucket: select.value }));
      return h('div', { class: 'pager' }, h('a', { href: '#/topics' }, '‹ all topics'), select,
        h('button', { type: 'button', id: 'purge', class: 'danger', onclick: () => confirmAction(
          'Purge every stored message of ' + name + '? This cannot be undone.',
          () => api('/topic/purge', { name }, 'POST'), (r) => 'Purged ' + fmt(r.purged) + ' messages.') }, 'Purge topic'));
    },
    async body(params, name) {
      const bucket = num(params.get('bucket') || 60000);
      const r = await api('/topic', { name, bucketMs: bucket, buckets: 60 });
      const t = r.stats;
      const groups = r.groups.groups.map((g) => [g.group, fmt(g.pending), fmt(g.inFlight), String(g.consumers),
        g.pendingByDeliveries.map(fmt).join(' / '),
        g.backoffMs.length ? g.backoffMs.map(duration).join(', ') : 'default', g.maxDeliveries ? String(g.maxDeliveries) : '∞',
        g.deadLetterTopic ? link('#/topic/' + encodeURIComponent(g.deadLetterTopic), g.deadLetterTopic) : '', h('button', { type: 'button', class: 'danger delete-group', onclick: () => confirmAction(
          'Delete group ' + g.group + ' of ' + name + '? Its receipts go and it no longer holds messages back.',
          () => api('/group/delete', { topic: name, group: g.group }, 'POST'), () => 'Group ' + g.group + ' deleted.') }, 'Delete')]);
      const next = r.next.messages.map((m) => [m.id, dateTime(m.dueAtMs), time(m.enqueuedAtMs),
        num(m.expiresAtMs) ? dateTime(m.expiresAtMs) : '', payloadText(m.payload),
        h('button', { type: 'button', class: 'danger cancel', 'data-id': m.id, onclick: () => confirmAction(
          'Cancel message ' + m.id + '? It is deleted for every group.',
          () => api('/topic/cancel', { name, id: m.id }, 'POST'), () => 'Message ' + m.id + ' cancelled.') }, 'Cancel')]);
      return [
        h('div', { class: 'cards' }, card('pending', fmt(t.pending)), card('due now', fmt(t.dueNow)),
          card('due ≤ 1 min', fmt(t.dueWithin1m)), card('due ≤ 1 h', fmt(t.dueWithin1h)),
          card('due ≤ 1 day', fmt(t.dueWithin1d)), card('in flight', fmt(t.inFlight)),
          card('consumers', String(t.consumers))),
        h('h2', {}, 'Schedule: pending messages by due time'),
        timeline(r.schedule, bucket),
        h('h2', {}, 'Groups'),
        table(['group', col('pending'), col('in flight'), col('consumers'), 'pending by deliveries 0 / 1 / 2 / 3 / 4+',
          'backoff', col('max deliveries'), 'dead letters to', ''], groups,
          'No durable groups.'),
        h('h2', {}, 'Consumers'),
        table(['consumer', 'group', col('buffered')], r.consumers.consumers.map((c) =>
          [c.id, c.group || '(universal)', String(c.buffered)]), 'No consumers connected to the leader.'),
        h('h2', {}, 'Next messages'),
        table(['id', 'due', 'enqueued', 'expires', 'payload', ''], next, 'Nothing stored.'),
      ];
    },
  },

  rooms: {
    title: () => 'Rooms',
    async body(params) {
      const offset = num(params.get('offset'));
      const r = await api('/rooms', { offset, limit: PAGE + 1 });
      const more = r.rooms.length > PAGE;
      const rooms = r.rooms.slice(0, PAGE);
      const rows = rooms.map((x) => [link('#/room/' + encodeURIComponent(x.room), x.room), fmt(x.backlog),
        String(x.members.length), String(x.members.filter((m) => m.ready).length), String(x.listeners),
        x.inFlight || '', x.atLeastOnce ? 'at least once' : 'at most once', x.recovering ? 'recovering' : '']);
      return [h('div', { class: 'pager' },
        h('button', { type: 'button', id: 'prev', disabled: offset === 0, onclick: () => navigate('#/rooms', { offset: Math.max(0, offset - PAGE) }) }, '‹ Previous'),
        h('span', { id: 'range' }, rooms.length ? (offset + 1) + '–' + (offset + rooms.length) : 'none'),
        h('button', { type: 'button', id: 'next', disabled: !more, onclick: () => navigate('#/rooms', { offset: offset + PAGE }) }, 'Next ›')),
      table(['room', col('backlog'), col('members'), col('ready'), col('listeners'), 'in flight', 'delivery', ''], rows,
        'No rooms with members, listeners or a backlog.')];
    },
  },

  room: {
    title: (name) => 'Room ' + name,
    toolbar: () => h('div', { class: 'pager' }, h('a', { href: '#/rooms' }, '‹ all rooms')),
    async body(params, name) {
      const r = await api('/room', { name, peek: 20 });
      const st = r.state;
      return [
        h('div', { class: 'cards' }, card('backlog', fmt(st.backlog)), card('members', String(st.members.length)),
          card('ready', String(st.members.filter((m) => m.ready).length)), card('listeners', String(st.listeners)),
          card('waiting for acks of', st.inFlight || 'nothing')),
        h('h2', {}, 'Members'),
        table(['client', 'last seen', 'ready'], st.members.map((m) => [m.clientId, ago(m.lastSeenMs),
          m.ready ? h('span', { class: 'ok' }, 'ready') : h('span', { class: 'error' }, 'not acked')]), 'No sync members.'),
        h('h2', {}, 'Barrier latency (delivery to the last ack, on the current leader)'),
        latencyChart(st.barrierLatencyCounts.map(num), st.barrierLatencyBoundsMs.map(num)),
        h('h2', {}, 'Pending'),
        table(['message', col('priority'), 'sent', 'payload'], r.pending.messages.map((m) =>
          [m.messageId, String(m.priority), time(m.sentAtMs), payloadText(m.payload)]), 'Nothing pending.'),
      ];
    },
  },
};

function timeline(schedule, bucket) {
  const buckets = schedule.buckets.map((b) => ({ from: num(b.fromMs), count: num(b.count) }));
  const bars = [{ label: 'due', count: num(schedule.before) }, ...buckets.map((b) => ({ label: time(b.from), count: b.count }))];
  const w = 900;
  const hgt = 180;
  const max = Math.max(1, ...bars.map((b) => b.count));
  const bw = (w - 50) / bars.length;
  const svg = s('svg', { class: 'chart', id: 'timeline', width: w, height: hgt, viewBox: '0 0 ' + w + ' ' + hgt, role: 'img',
    'aria-label': 'pending messages by due time', 'data-total': bars.reduce((a, b) => a + b.count, 0) + num(schedule.after) });
  bars.forEach((b, i) => {
    const bh = (b.count / max) * (hgt - 40);
    svg.append(s('rect', { class: 'bar', x: 40 + i * bw, y: hgt - 20 - bh, width: Math.max(1, bw - 1), height: bh,
      'data-count': b.count }, s('title', {}, b.label + ': ' + b.count)));
  });
  svg.append(s('line', { class: 'axis', x1: 40, y1: hgt - 20, x2: w - 10, y2: hgt - 20 }));
  svg.append(s('text', { x: 2, y: 14 }, String(max)));
  for (const i of [0, 2, Math.floor(bars.length / 2), bars.length - 1]) {
    svg.append(s('text', { x: 40 + i * bw, y: hgt - 5 }, bars[i].label));
  }
  return h('div', {}, svg, h('p', { class: 'muted' }, 'First bar: due already (overdue or in flight). '
    + fmt(schedule.after) + ' more fall due after the last bucket (' + duration(bucket) + ' each).'));
}

function latencyChart(counts, bounds) {
  const total = counts.reduce((a, b) => a + b, 0);
  if (!total) {
    return h('p', { class: 'muted' }, 'No barrier completed on this leader yet.');
  }
  const labels = bounds.map((b) => '≤ ' + duration(b)).concat(['> ' + duration(bounds[bounds.length - 1])]);
  const w = 700;
  const hgt = 150;
  const max = Math.max(...counts);
  const bw = (w - 20) / counts.length;
  const svg = s('svg', { class: 'chart', id: 'barrier', width: w, height: hgt, viewBox: '0 0 ' + w + ' ' + hgt, role: 'img',
    'aria-label': 'barrier latency distribution' });
  counts.forEach((c, i) => {
    const bh = (c / max) * (hgt - 40);
    svg.append(s('rect', { class: 'bar', x: 10 + i * bw, y: hgt - 25 - bh, width: bw - 2, height: bh },
      s('title', {}, labels[i] + ': ' + c)));
    svg.append(s('text', { x: 10 + i * bw, y: hgt - 8 }, labels[i].replace(' ms', '').replace('≤ ', '')));
  });
  return h('div', {}, svg, h('p', { class: 'muted' }, fmt(total) + ' barriers; buckets by upper bound.'));
}

// ---- routing and refresh

function navigate(hash, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '' && v !== 0) {
      q.set(k, v);
    }
  }
  location.hash = hash + (q.toString() ? '?' + q : '');
}

function parseRoute() {
  const raw = (location.hash || '#/cluster').slice(1);
  const [path, query] = raw.split('?');
  const parts = path.split('/').filter(Boolean);
  const page = pages[parts[0]] ? parts[0] : 'cluster';
  return { page, name: parts[1] ? decodeURIComponent(parts[1]) : '', params: new URLSearchParams(query || '') };
}

function show() {
  const route = parseRoute();
  state.route = route;
  const def = pages[route.page];
  const section = { topic: 'topics', room: 'rooms' }[route.page] || route.page;
  for (const a of document.querySelectorAll('header nav a')) {
    a.classList.toggle('active', a.dataset.nav === section);
  }
  state.content = h('div', { id: 'content' });
  state.drawn = null;
  document.getElementById('page').replaceChildren(h('h1', {}, def.title(route.name)),
    def.toolbar ? def.toolbar(route.params, route.name) : '', state.content);
  document.title = def.title(route.name) + ' · Hourglass';
  refresh();
}

async function refresh() {
  if (state.busy || !state.route || document.getElementById('confirm').open) {
    return;
  }
  state.busy = true;
  const route = state.route;
  const target = state.content;
  try {
    const body = await pages[route.page].body(route.params, route.name);
    // Redrawn only when something changed: an unchanged page keeps its elements (focus, hover, clicks).
    const html = body.map((n) => (n instanceof Node ? (n.outerHTML || n.textContent) : String(n))).join('');
    if (route === state.route && html !== state.drawn) {
      state.drawn = html;
      target.replaceChildren(...body);
    }
    if (route === state.route) {
      document.getElementById('refreshed').textContent = 'Updated ' + new Date().toLocaleTimeString('en-GB')
        + ' · refreshes every ' + REFRESH_MS / 1000 + ' s';
    }
  } catch (e) {
    if (route === state.route && e.status !== 401) {
      state.drawn = null;
      target.replaceChildren(h('p', { class: 'error', id: 'load-error' }, e.message));
    }
  } finally {
    state.busy = false;
  }
}

async function start() {
  document.getElementById('signin').addEventListener('submit', async (event) => {
    event.preventDefault();
    state.token = document.getElementById('token').value.trim();
    sessionStorage.setItem('hourglass.token', state.token);
    if (await loadInfo()) {
      show();
    }
  });
  document.getElementById('signout').addEventListener('click', () => {
    sessionStorage.removeItem('hourglass.token');
    state.token = null;
    location.reload();
  });
  window.addEventListener('hashchange', show);
  if (await loadInfo()) {
    show();
  }
  setInterval(() => {
    if (!document.hidden && state.info) {
      refresh();
    }
  }, REFRESH_MS);
}

start();

// The hub console of hubgate's mock: pushes through the admin API (same
// origin) and follows the journal's event stream. No build step.
'use strict';

const $ = (id) => document.getElementById(id);
let devices = [];
let source = null;
let lastSeq = 0;

function deviceID() { return $('device').value; }

function connQuery() {
  const c = $('connection').value;
  return c ? '?connection=' + encodeURIComponent(c) : '';
}

function show(text, isError) {
  $('result').textContent = text;
  $('result').className = isError ? 'error' : '';
}

async function call(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  const text = await resp.text();
  let data = null;
  try { data = JSON.parse(text); } catch (e) { data = text; }
  if (!resp.ok) {
    const detail = data && data.detail ? data.detail : text;
    throw new Error(resp.status + ' ' + detail);
  }
  return data;
}

async function act(label, method, path, body) {
  try {
    const data = await call(method, path, body);
    show(label + ': ' + JSON.stringify(data), false);
    await loadDevices();
  } catch (err) {
    show(label + ': ' + err.message, true);
  }
}

function devicePath(action) {
  return '/mock/devices/' + encodeURIComponent(deviceID()) + '/' + action + connQuery();
}

function fill(select, options, keep) {
  const old = keep ? select.value : '';
  const first = select.dataset.first !== undefined ? select.options[0] : null;
  select.textContent = '';
  if (first) select.appendChild(first);
  for (const [value, label] of options) {
    const o = document.createElement('option');
    o.value = value;
    o.textContent = label;
    select.appendChild(o);
  }
  if ([...select.options].some((o) => o.value === old)) select.value = old;
}

async function loadDevices() {
  try {
    devices = await call('GET', '/mock/devices');
  } catch (err) {
    show('devices: ' + err.message, true);
    return;
  }
  const before = deviceID();
  fill($('device'), devices.map((d) => [d.device.id, (d.device.nameOverride || d.device.id) + ' (' + d.connections + ' connection' + (d.connections === 1 ? '' : 's') + ')']), true);
  if (!deviceID() && devices.length > 0) $('device').value = devices[0].device.id;
  showDevice();
  if (before !== deviceID() || !source) follow();
}

function showDevice() {
  const d = devices.find((x) => x.device.id === deviceID());
  fill($('connection'), d ? d.hubConnections.map((c) => [c.id, c.id + ' (' + c.transport + ')']) : [], true);
  const macros = d && d.device.currentProfile && d.device.currentProfile.configuration ? d.device.currentProfile.configuration.macros || [] : [];
  fill($('macro-name'), macros.map((m) => [m.name, m.name + ' [' + (m.commands || []).join(', ') + ']']), true);
  $('device-state').textContent = d
    ? ['verified', 'connected', 'listening'].map((f) => f + ' ' + (d.device['is' + f[0].toUpperCase() + f.slice(1)] ? 'yes' : 'no')).join(' · ')
    : 'no device yet: start a client, or create one';
}

function short(raw) {
  if (raw === undefined || raw === null) return '';
  const s = JSON.stringify(raw);
  return s.length > 600 ? s.slice(0, 600) + '…' : s;
}

function render(e) {
  const li = document.createElement('li');
  li.dataset.seq = e.seq;
  li.dataset.direction = e.direction;
  li.dataset.action = e.action;
  li.className = e.direction + (e.error ? ' err' : '');
  const t = new Date(e.time);
  const parts = [
    ['seq', '#' + e.seq],
    ['time', t.toLocaleTimeString([], { hour12: false }) + '.' + String(t.getMilliseconds()).padStart(3, '0')],
    ['dir', e.direction === 'out' ? '→' : '←'],
    ['source', e.source],
    ['action', e.action],
  ];
  if (e.connectionId) parts.push(['conn', 'conn=' + e.connectionId]);
  if (e.status) parts.push(['status', String(e.status)]);
  if (e.error) parts.push(['error', 'error=' + JSON.stringify(e.error)]);
  if (e.payload !== undefined) parts.push(['payload', 'payload=' + short(e.payload)]);
  if (e.result !== undefined) parts.push(['payload', 'result=' + short(e.result)]);
  for (const [cls, text] of parts) {
    const span = document.createElement('span');
    span.className = cls;
    span.textContent = text + ' ';
    li.appendChild(span);
  }
  const log = $('log');
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  log.appendChild(li);
  while (log.children.length > 2000) log.removeChild(log.firstChild);
  if (atBottom) log.scrollTop = log.scrollHeight;
}

function follow() {
  if (source) source.close();
  $('log').textContent = '';
  lastSeq = 0;
  const q = new URLSearchParams();
  if (!$('all-devices').checked && deviceID()) q.set('device', deviceID());
  source = new EventSource('/mock/journal?' + q.toString());
  $('live').textContent = 'connecting';
  $('live').className = '';
  source.onopen = () => { $('live').textContent = 'live'; $('live').className = 'on'; };
  source.onerror = () => { $('live').textContent = 'reconnecting'; $('live').className = ''; };
  source.addEventListener('gap', (m) => {
    const li = document.createElement('li');
    li.className = 'err';
    li.textContent = JSON.parse(m.data).missed + ' older entries were dropped from the journal';
    $('log').appendChild(li);
  });
  source.onmessage = (m) => {
    const e = JSON.parse(m.data);
    if (e.seq <= lastSeq) return;
    lastSeq = e.seq;
    render(e);
    if (['connected', 'disconnected', 'VerifySelf', 'DeviceStartedListening', 'DeviceStoppedListening', 'CreateDevice', 'CreateUserDevice'].includes(e.action)) {
      loadDevices();
    }
  };
}

function parse(id) {
  try {
    return JSON.parse($(id).value);
  } catch (err) {
    show(id + ' is not JSON: ' + err.message, true);
    return undefined;
  }
}

function faultFor(key) {
  return () => act('fault', 'POST', '/mock/faults', { [key]: $('fault-for').value });
}

function wire() {
  $('device').addEventListener('change', () => { showDevice(); follow(); });
  $('all-devices').addEventListener('change', follow);
  $('refresh').addEventListener('click', loadDevices);
  $('clear').addEventListener('click', () => { $('log').textContent = ''; });
  $('create').addEventListener('click', () => act('new device', 'POST', '/mock/devices', { name: 'Console device' }));
  $('send-macro').addEventListener('click', () => {
    if (!$('macro-name').value) return show('pick a macro of the device\'s profile (push a profile first)', true);
    act('DeviceCommand', 'POST', devicePath('command'), { macroName: $('macro-name').value });
  });
  $('send-command').addEventListener('click', () => {
    const body = parse('command-json');
    if (body !== undefined) act('DeviceCommand', 'POST', devicePath('command'), body);
  });
  $('send-profile').addEventListener('click', () => {
    const body = parse('profile-json');
    if (body !== undefined) act('profile', 'POST', devicePath('profile'), body);
  });
  $('send-settings').addEventListener('click', () => {
    const body = parse('settings-json');
    if (body !== undefined) act('settings', 'POST', devicePath('settings'), body);
  });
  $('start-listening').addEventListener('click', () => act('StartListening', 'POST', devicePath('start-listening')));
  $('stop-listening').addEventListener('click', () => act('StopListening', 'POST', devicePath('stop-listening')));
  $('fault-drop').addEventListener('click', () => act('fault', 'POST', '/mock/faults', { drop: true }));
  $('fault-expire').addEventListener('click', () => act('fault', 'POST', '/mock/faults', { expireServiceTokens: true }));
  $('fault-refuse').addEventListener('click', faultFor('refuseFor'));
  $('fault-freeze').addEventListener('click', faultFor('freeze'));
  $('fault-negotiate').addEventListener('click', faultFor('serviceErrorFor'));
  $('fault-end').addEventListener('click', () => act('fault', 'POST', '/mock/faults', { refuseFor: '0s', freeze: '0s', serviceErrorFor: '0s' }));
}

$('connection').dataset.first = '';
$('macro-name').dataset.first = '';
wire();
loadDevices();

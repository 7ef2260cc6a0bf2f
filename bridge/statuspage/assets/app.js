// The status page: renders /api/state and keeps it live with the bridge's
// event stream (/api/events). No framework, no build step. Each section
// of index.html has its render or setup function here.
'use strict';
(() => {
  // The session's CSRF token: never a cookie, sent in a header on POSTs.
  const csrf = document.querySelector('meta[name="hubgate-csrf"]').content;
  // The token came in the address (hubgate open); the cookie holds it now.
  if (location.search.includes('token=')) history.replaceState(null, '', '/');
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  };
  // Times carry their date: a page left open spans days.
  const when = (s) => (s ? new Date(s).toLocaleString() : '');
  // post sends a state-changing request with the CSRF header and returns
  // [ok, answer].
  async function post(path, body) {
    const r = await fetch(path, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Hubgate-CSRF': csrf },
      body: JSON.stringify(body),
    });
    let res = {};
    try { res = await r.json(); } catch (_) { res = { error: r.statusText }; }
    return [r.ok, res];
  }

  let current = null;
  // clockSkew is the daemon's clock minus the browser's, from /api/state.
  let clockSkew = 0;

  function renderHub(st) {
    const hub = st.hub || {};
    $('hub-status').textContent = hub.status || 'unknown';
    $('hub-status').className = 'pill ' + (hub.status || '');
    $('hub-reason').textContent = (hub.reason || '') + (hub.needsRepair ? ' (the device must be paired again: run hubgate pair --reuse)' : '');
    $('listening').textContent = st.listening ? 'yes, commands are acted on' : 'no, commands are refused';
    // What the hub asked is its wish, not the connection's state.
    const asked = st.hubAsked;
    $('hub-asked').textContent = asked
      ? 'The hub asked to ' + (asked.listen ? 'start' : 'stop') + ' listening on ' + when(asked.at) +
        (st.listeningPolicy ? ' (bridge.listening: ' + st.listeningPolicy + ')' : '')
      : 'The hub has not asked to start or stop listening.';
    $('device').textContent = st.deviceId ? 'device ' + st.deviceId : '';
  }

  // stepItem is one step: status, title, tool with its arguments, result
  // summary, produced file.
  function stepItem(s) {
    const li = el('li');
    li.dataset.index = s.index;
    li.dataset.status = s.status;
    li.append(el('span', s.status, 'pill ' + s.status), ' ' + (s.title || 'step ' + s.index));
    if (s.toolName) li.append(el('span', 'tool ' + s.toolName + (s.argsSummary ? ' ' + s.argsSummary : ''), 'detail'));
    if (s.resultSummary) li.append(el('span', '→ ' + s.resultSummary, 'detail'));
    if (s.producedFilePath) li.append(el('span', 'produced ' + s.producedFilePath, 'detail'));
    return li;
  }

  function renderCurrent(st) {
    current = st.current;
    showQuestion(current && current.question);
    const cur = $('current');
    cur.replaceChildren();
    if (current) {
      cur.append(el('p', current.command, 'command'));
      const p = el('p');
      p.append(el('span', current.status, 'pill ' + current.status), ' #' + current.commandId +
        (current.rule ? ' · rule ' + current.rule : '') + ' · since ' + when(current.startedAt) +
        (current.workflowStatus ? ' · ' + current.workflowStatus : ''));
      cur.append(p);
      $('current-steps').replaceChildren(...(current.steps || []).map(stepItem));
      $('cancel').hidden = !!current.cancel;
    } else {
      cur.append(el('p', 'Nothing runs.', 'muted'));
      $('current-steps').replaceChildren();
      $('cancel').hidden = true;
    }
    renderCancel();
  }

  // renderCancel shows a requested cancel: who asked and the grace
  // counting down to the force cancel, with "Force now".
  function renderCancel() {
    const c = current && current.cancel;
    $('force').hidden = !c || c.forced;
    if (!c) {
      $('cancel-state').textContent = '';
      return;
    }
    if (c.forced) {
      $('cancel-state').textContent = 'Cancel requested by ' + c.by + ' on ' + when(c.at) + '; force cancel sent.';
      return;
    }
    const left = Math.max(0, Math.ceil((Date.parse(c.forceAt) - (Date.now() + clockSkew)) / 1000));
    $('cancel-state').textContent = 'Cancel requested by ' + c.by + ' on ' + when(c.at) + '. The run stops at its next step; ' +
      (left > 0 ? 'hubgate forces it in ' + left + ' s (grace ' + Math.round(c.graceMs / 1000) + ' s).' : 'forcing it now.');
  }
  setInterval(renderCancel, 250);

  function renderQueue(st) {
    const q = $('queue');
    q.replaceChildren(...st.queue.map((c) => el('li', '#' + c.commandId + ' ' + c.command + (c.rule ? ' (' + c.rule + ')' : '') + ', since ' + when(c.queuedAt))));
    $('queue-empty').hidden = st.queue.length > 0;
  }

  function renderRecent(st) {
    const runs = st.recent || [];
    if (runs.length === 0) {
      $('recent').replaceChildren(el('p', 'No run finished since the daemon started.', 'muted'));
      return;
    }
    $('recent').replaceChildren(...runs.map((r) => {
      const d = el('div', undefined, 'run');
      d.dataset.id = r.commandId;
      const outcome = r.outcome.split(' ')[0];
      const p = el('p');
      p.append(el('span', r.outcome, 'pill ' + outcome), ' #' + r.commandId + ' ' + r.command +
        (r.rule ? ' · rule ' + r.rule : '') + ' · ' + when(r.startedAt) + ' to ' + when(r.finishedAt) +
        (r.stoppedBy ? ' · stopped by ' + r.stoppedBy : '') + (r.forcedBy ? (r.forcedBy === r.stoppedBy ? ' (forced)' : ' · forced by ' + r.forcedBy) : ''));
      const ol = el('ol', undefined, 'steps');
      ol.append(...r.steps.map(stepItem));
      d.append(p, ol);
      return d;
    }));
  }

  function renderHistory(state) {
    $('history').replaceChildren(...state.history.map((e) => {
      const tr = el('tr');
      tr.dataset.id = e.id;
      const outcome = e.status || (e.run === 'running' || e.run === 'parked' ? e.run : e.decision);
      const out = el('td');
      out.append(el('span', outcome + (e.errorCode ? ' (' + e.errorCode + ')' : ''), 'pill ' + outcome));
      // The note says who stopped a run and whether the command was local.
      const text = [e.finalAnswer || e.answer || e.error, e.note].filter(Boolean).join('\n'); // as control.Event.Text: an empty finalAnswer falls back to the answer
      tr.append(el('td', String(e.id)), el('td', when(e.receivedAt)), el('td', e.command), el('td', e.rule || ''), out, el('td', text, 'answer'));
      return tr;
    }));
  }

  function renderRules(state) {
    $('rules-card').hidden = state.rules === null;
    $('try-form').hidden = state.rules === null;
    if (state.rules) $('rules').replaceChildren(...state.rules.map((r) => el('li', r)));
  }

  function render(state) {
    clockSkew = Date.parse(state.now) - Date.now();
    const st = state.status;
    renderHub(st);
    renderCurrent(st);
    renderQueue(st);
    renderRecent(st);
    renderHistory(state);
    renderRules(state);
  }

  // One state request at a time; an event that arrives while one is in
  // flight asks for one more afterwards (the one in flight may have been
  // answered before that event's change).
  let pending = null;
  let again = false;
  async function refresh() {
    if (pending) {
      again = true;
      return pending;
    }
    pending = (async () => {
      try {
        do {
          again = false;
          const r = await fetch('/api/state', { credentials: 'same-origin' });
          if (r.ok) render(await r.json());
        } while (again);
      } finally {
        pending = null;
      }
    })();
    return pending;
  }

  // The stream starts with the latest events (the box is never empty on
  // a daemon that did something); a reconnect starts it again.
  function connect() {
    const es = new EventSource('/api/events');
    es.onopen = () => { $('live').textContent = 'live'; $('live').className = 'pill on'; $('events').replaceChildren(); refresh(); };
    es.onerror = () => { $('live').textContent = 'reconnecting…'; $('live').className = 'pill off'; };
    es.addEventListener('bridge', (m) => {
      const e = JSON.parse(m.data);
      const li = el('li', when(e.at) + ' ' + e.text); // the server renders the one text form
      li.dataset.kind = e.kind;
      $('events').prepend(li);
      while ($('events').children.length > 200) $('events').lastChild.remove();
      refresh();
    });
  }

  async function cancel(force) {
    $('cancel-result').textContent = force ? 'forcing…' : 'cancelling…';
    try {
      const [ok, res] = await post('/api/cancel', { force });
      $('cancel-result').textContent = !ok ? (res.error || 'failed')
        : !res.stopped ? 'nothing runs'
        : force ? 'force cancel sent for #' + res.commandId
        : 'cancel requested for #' + res.commandId;
    } catch (err) {
      $('cancel-result').textContent = String(err);
    }
    refresh();
  }

  // The answer box: the question the run in flight asked (ask_person),
  // its choices as buttons, and a text answer; POST /api/answer.
  function showQuestion(q) {
    $('ask').hidden = !q;
    if (!q) return;
    $('ask-question').textContent = q.question;
    const choices = $('ask-choices');
    choices.replaceChildren();
    for (const c of q.choices || []) {
      const b = el('button', c, 'choice');
      b.type = 'button';
      b.addEventListener('click', () => sendAnswer(c));
      choices.append(b, ' ');
    }
    $('ask-deadline').textContent = 'Answer by ' + time(q.deadline) + '.';
  }

  async function sendAnswer(text) {
    if (!text.trim()) return;
    $('ask-result').textContent = 'sending…';
    try {
      const r = await fetch('/api/answer', {
        method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-Hubgate-CSRF': csrf },
        body: JSON.stringify({ text }),
      });
      const res = await r.json();
      $('ask-result').textContent = res.message || res.error || r.statusText;
      if (r.ok) $('ask-text').value = '';
    } catch (err) {
      $('ask-result').textContent = String(err);
    }
    refresh();
  }

  $('ask-send').addEventListener('click', () => sendAnswer($('ask-text').value));
  $('ask-text').addEventListener('keydown', (e) => { if (e.key === 'Enter') sendAnswer($('ask-text').value); });

  function setupCancel() {
    $('cancel').addEventListener('click', () => cancel(false));
    $('force').addEventListener('click', () => cancel(true));
  }

  function setupTry() {
    $('try-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const text = $('try-text').value.trim();
      if (!text) return;
      $('try-result').textContent = 'sending…';
      try {
        const [ok, res] = await post('/api/command', { text });
        $('try-result').textContent = !ok ? (res.error || 'failed')
          : res.commandId ? 'command #' + res.commandId + ' sent to the rules: see the live events'
          : 'not run: the journal could not record it (see the live events)';
      } catch (err) {
        $('try-result').textContent = String(err);
      }
      refresh();
    });
  }

  // The rules test runs as the person types (the latest answer wins).
  function setupRulesTest() {
    let asked = 0;
    let timer = null;
    $('rules-test-text').addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const text = $('rules-test-text').value;
        const n = ++asked;
        if (!text.trim()) {
          $('rules-test-result').textContent = '';
          return;
        }
        try {
          const [ok, res] = await post('/api/rules-test', { text });
          if (n === asked) $('rules-test-result').textContent = ok ? res.text : (res.error || 'failed');
        } catch (err) {
          if (n === asked) $('rules-test-result').textContent = String(err);
        }
      }, 150);
    });
  }

  setupCancel();
  setupTry();
  setupRulesTest();
  refresh();
  connect();
})();

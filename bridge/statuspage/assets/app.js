// The status page: renders /api/state and keeps it live with the bridge's
// event stream (/api/events). No framework, no build step.
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
  const time = (s) => (s ? new Date(s).toLocaleTimeString() : '');
  let current = null;

  function render(state) {
    const st = state.status;
    const hub = st.hub || {};
    $('hub-status').textContent = hub.status || 'unknown';
    $('hub-status').className = 'pill ' + (hub.status || '');
    $('hub-reason').textContent = (hub.reason || '') + (hub.needsRepair ? ' (run hubgate pair again)' : '');
    $('listening').textContent = st.listening ? 'yes' : 'no (refused)';
    const asked = st.hubAsked;
    $('hub-asked').textContent = asked
      ? 'the hub asked to ' + (asked.listen ? 'start' : 'stop') + ' listening at ' + time(asked.at) +
        (st.listeningPolicy ? ' (bridge.listening: ' + st.listeningPolicy + ')' : '')
      : '';
    $('device').textContent = st.deviceId ? 'device ' + st.deviceId : '';

    current = st.current;
    showQuestion(current && current.question);
    const cur = $('current');
    cur.replaceChildren();
    if (current) {
      cur.append(el('p', current.command, 'command'));
      const p = el('p');
      p.append(el('span', current.status, 'pill ' + current.status), ' #' + current.commandId +
        (current.rule ? ' · rule ' + current.rule : '') + ' · since ' + time(current.startedAt));
      cur.append(p);
      $('cancel').hidden = false;
    } else {
      cur.append(el('p', 'Nothing runs.', 'muted'));
      $('cancel').hidden = true;
    }

    const q = $('queue');
    q.replaceChildren(...st.queue.map((c) => el('li', '#' + c.commandId + ' ' + c.command + (c.rule ? ' (' + c.rule + ')' : ''))));
    $('queue-empty').hidden = st.queue.length > 0;

    $('history').replaceChildren(...state.history.map((e) => {
      const tr = el('tr');
      tr.dataset.id = e.id;
      const outcome = e.status || (e.run === 'running' || e.run === 'parked' ? e.run : e.decision);
      const out = el('td');
      out.append(el('span', outcome + (e.errorCode ? ' (' + e.errorCode + ')' : ''), 'pill ' + outcome));
      const text = e.finalAnswer || e.answer || e.error || e.note || ''; // as control.Event.Text: an empty finalAnswer falls back to the answer
      tr.append(el('td', String(e.id)), el('td', time(e.receivedAt)), el('td', e.command), el('td', e.rule || ''), out, el('td', text, 'answer'));
      return tr;
    }));
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

  function connect() {
    const es = new EventSource('/api/events');
    es.onopen = () => { $('live').textContent = 'live'; $('live').className = 'pill on'; refresh(); };
    es.onerror = () => { $('live').textContent = 'reconnecting…'; $('live').className = 'pill off'; };
    es.addEventListener('bridge', (m) => {
      const e = JSON.parse(m.data);
      const li = el('li', time(e.at) + ' ' + e.text); // the server renders the one text form
      li.dataset.kind = e.kind;
      $('events').prepend(li);
      while ($('events').children.length > 200) $('events').lastChild.remove();
      refresh();
    });
  }

  $('cancel').addEventListener('click', async () => {
    $('cancel-result').textContent = 'cancelling…';
    try {
      const r = await fetch('/api/cancel', {
        method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-Hubgate-CSRF': csrf },
        body: JSON.stringify({ force: false }),
      });
      const res = await r.json();
      $('cancel-result').textContent = r.ok ? (res.stopped ? 'cancel requested for #' + res.commandId : 'nothing runs') : (res.error || r.statusText);
    } catch (err) {
      $('cancel-result').textContent = String(err);
    }
    refresh();
  });

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

  refresh();
  connect();
})();

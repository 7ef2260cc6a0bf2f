// mock-browser-device-e2e.cjs: loads hub/mockhub's browser device page
// (hub/mockhub/testdata/browser-device/index.html), served from its own
// origin, in headless Chromium with playwright-core, for hub/mockhub's Go
// test: the page signs in at the mock, pairs, and connects with the
// official @microsoft/signalr client. Protocol on stdout, one line each:
//   READY            the page is connected and waits for a command; the Go
//                    test now pushes one
//   RESULT <json>    the page's window.result, the WebSockets Chromium
//                    opened, the requests it made to the hub and the
//                    page's navigations; then it exits 0
// Any failure prints "FAIL <message>" and exits 1.
// Environment: PAGE_URL (the page with api, client_id and device_type in
// its query), SCREENSHOT (a .png path), CHROMIUM (default /usr/bin/chromium).
'use strict';
const { chromium } = require('playwright-core');

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    const sockets = [];
    const hubRequests = [];
    const navigations = [];
    page.on('console', (m) => console.log('CONSOLE ' + m.type() + ' ' + m.text()));
    page.on('pageerror', (e) => console.log('PAGEERROR ' + String(e)));
    page.on('websocket', (ws) => {
      const s = { url: ws.url().split('?')[0], framesReceived: 0, closed: false };
      sockets.push(s);
      ws.on('framereceived', () => { s.framesReceived++; });
      ws.on('close', () => { s.closed = true; });
    });
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith('/device') || u.pathname.startsWith('/client')) {
        hubRequests.push({ method: r.method(), path: u.pathname, type: r.resourceType() });
      }
    });
    page.on('request', (r) => {
      if (r.isNavigationRequest() && r.frame() === page.mainFrame()) {
        const u = new URL(r.url()); // each hop of a redirect is a request of its own
        navigations.push(u.origin + u.pathname);
      }
    });

    await page.goto(process.env.PAGE_URL);
    await page.waitForFunction(() => ['connected', 'error'].includes(document.getElementById('state').dataset.state),
      null, { timeout: 30000 });
    const state = await page.getAttribute('#state', 'data-state');
    if (state !== 'connected') {
      throw new Error('the page did not connect: ' + JSON.stringify(await page.evaluate(() => window.result)));
    }
    console.log('READY');

    await page.waitForSelector('#commands li', { timeout: 30000 });
    await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
    const result = await page.evaluate(() => window.result);
    Object.assign(result, { sockets, hubRequests, navigations });
    console.log('RESULT ' + JSON.stringify(result));
  } catch (err) {
    for (const p of browser.contexts().flatMap((c) => c.pages())) {
      console.log('PAGE ' + (await p.evaluate(() => document.body.innerText)).replace(/\n/g, ' | '));
    }
    throw err;
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  console.log('FAIL ' + String(err && err.stack || err).replace(/\n/g, ' | '));
  process.exit(1);
});

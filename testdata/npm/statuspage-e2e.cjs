// statuspage-e2e.cjs: drives hubgate's status page in headless Chromium
// with playwright-core (Debian's chromium; no browser download), for
// bridge/statuspage's Go test. Protocol on stdout, one line each:
//   READY            the page is loaded and its event stream is live; the
//                    Go test now pushes a slow command
//   RESULT <json>    what the page showed; then it exits 0
// Any failure prints "FAIL <message>" and exits 1.
//
// The browser resolves evil.example to 127.0.0.1 (a DNS rebinding
// attacker's name) and loads the page under it.
// Environment: LOGIN_URL (a one-time login address, what `hubgate open`
// gives the browser: the code-free /login on Linux, where the page serves
// only its owner's connections, else /login?code=...; the page logs in
// with it), PAGE_URL
// (with ?token=..., what `hubgate open --print` prints), SCREENSHOT (a .png path),
// COMMAND (the text the current run shows), CHROMIUM (default
// /usr/bin/chromium).
'use strict';
const { chromium } = require('playwright-core');

const url = process.env.PAGE_URL;
const loginURL = process.env.LOGIN_URL;
const shot = process.env.SCREENSHOT;
const command = process.env.COMMAND;
const foreignHost = 'evil.example';

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
      // A foreign name that resolves to the loopback, as a DNS rebinding
      // attacker's name does.
      '--host-resolver-rules=MAP ' + foreignHost + ' 127.0.0.1'],
  });
  try {
    const result = {};
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.on('console', (m) => console.log('CONSOLE ' + m.type() + ' ' + m.text()));
    page.on('pageerror', (e) => console.log('PAGEERROR ' + String(e)));
    // Logged in by the one-time address: its 303 sets the cookie and
    // sends the browser on to the page.
    const first = await page.goto(loginURL);
    result.firstStatus = first.status();
    const redirect = first.request().redirectedFrom();
    result.loginStatus = redirect ? (await redirect.response()).status() : 0;
    await page.waitForFunction(() => document.getElementById('live').textContent === 'live', null, { timeout: 15000 });
    // Any code left the address bar; the session cookie is set.
    result.addressAfterLoad = page.url();
    result.cookies = (await context.cookies()).map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite }));
    console.log('READY');

    // The run shows up live (no reload): pushed by the Go test.
    await page.waitForFunction((cmd) => {
      const c = document.querySelector('#current .command');
      return c && c.textContent === cmd;
    }, command, { timeout: 20000 });
    result.currentShown = await page.textContent('#current');
    await page.screenshot({ path: shot, fullPage: true });

    // The cancel button cancels it (a soft cancel, escalated to terminate
    // after the bridge's grace when the run does not stop).
    await page.click('#cancel');
    await page.waitForFunction((cmd) => [...document.querySelectorAll('#history tr')].some((tr) =>
      tr.children[2].textContent === cmd && /^(canceled|terminated)/.test(tr.children[4].textContent)), command, { timeout: 20000 });
    result.cancelResult = await page.textContent('#cancel-result');
    result.currentAfterCancel = await page.textContent('#current');
    result.events = await page.$$eval('#events li', (lis) => lis.map((li) => li.textContent));

    // A POST without the session's CSRF header is refused, even with the cookie.
    result.postWithoutHeader = await page.evaluate(() => fetch('/api/cancel', { method: 'POST' }).then((r) => r.status));

    // Another browser context has no cookie: refused without the token.
    const stranger = await browser.newContext();
    const bare = new URL(url);
    bare.search = '';
    const other = await (await stranger.newPage()).goto(bare.toString());
    result.withoutToken = other.status();

    // The login address a second time, in another context: spent.
    const spent = await browser.newContext();
    const again = await (await spent.newPage()).goto(loginURL);
    result.loginAgain = again.status();
    result.loginAgainBody = await again.text();
    result.loginAgainCookies = (await spent.cookies()).length;

    // The token address (hubgate open --print) opens the page too, and
    // leaves the address bar.
    const byToken = await (await browser.newContext()).newPage();
    result.tokenStatus = (await byToken.goto(url)).status();
    await byToken.waitForFunction(() => document.getElementById('live').textContent === 'live', null, { timeout: 15000 });
    result.tokenAddressAfterLoad = byToken.url();

    // The page under a foreign name that resolves to 127.0.0.1 (DNS
    // rebinding), with the token even: refused for its Host.
    const foreign = new URL(url);
    foreign.hostname = foreignHost;
    const rebound = await (await (await browser.newContext()).newPage()).goto(foreign.toString());
    result.foreignHost = rebound.status();
    result.foreignHostBody = await rebound.text();
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

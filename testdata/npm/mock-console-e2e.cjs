// mock-console-e2e.cjs: drives the mock's hub console (/mock/console) in
// headless Chromium with playwright-core (Debian's chromium; no browser
// download), for hub/mockhub's Go test. Protocol on stdout, one line each:
//   READY            the page is loaded, its device picked and its live log
//                    connected; the Go test now starts a device client
//   RESULT <json>    what the page showed; then it exits 0
// Any failure prints "FAIL <message>" and exits 1.
// Environment: CONSOLE_URL (http://127.0.0.1:<port>/mock/console),
// DEVICE_ID, MACRO_NAME (a macro of the device's profile to send),
// SCREENSHOT (a .png path), CHROMIUM (default /usr/bin/chromium).
'use strict';
const { chromium } = require('playwright-core');

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const result = {};
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('console', (m) => console.log('CONSOLE ' + m.type() + ' ' + m.text()));
    page.on('pageerror', (e) => console.log('PAGEERROR ' + String(e)));
    const resp = await page.goto(process.env.CONSOLE_URL);
    result.status = resp.status();
    result.csp = resp.headers()['content-security-policy'] || '';
    await page.waitForFunction(() => document.getElementById('live').textContent === 'live', null, { timeout: 15000 });
    result.device = await page.inputValue('#device');
    console.log('READY');

    // The device client connects, verifies and starts listening: live.
    await page.waitForSelector('#log li[data-direction="in"][data-action="DeviceStartedListening"]', { timeout: 30000 });
    // Its connection shows up; the macro of its profile is offered.
    await page.waitForFunction(() => document.querySelectorAll('#connection option').length === 2, null, { timeout: 15000 });
    await page.selectOption('#macro-name', process.env.MACRO_NAME);
    await page.click('#send-macro');
    await page.waitForSelector('#log li[data-direction="out"][data-action="DeviceCommand"]', { timeout: 30000 });
    await page.waitForSelector('#log li[data-action="PushCommand"]', { timeout: 15000 });
    result.resultText = await page.textContent('#result');
    result.deviceState = await page.textContent('#device-state');
    result.log = await page.$$eval('#log li', (lis) => lis.map((li) => ({
      direction: li.dataset.direction, action: li.dataset.action, text: li.textContent,
    })));
    await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
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

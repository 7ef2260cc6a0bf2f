// statuspage-steer-e2e.cjs: drives the status page as a control center in
// headless Chromium with playwright-core (Debian's chromium), for
// bridge/statuspage's Go test. A multi-step run's steps 2 and 3 wait for
// their gate file (GATES/gate1, GATES/gate2), which this script creates
// only once the page shows the step running: the page shows them before
// the run can finish. Protocol on stdout, one line each:
//   RESULT <json>    what the page showed; then it exits 0
// Any failure prints "FAIL <message>" and exits 1.
// Environment: LOGIN_URL (the one-time login address), SCREENSHOT (a .png
// path), GATES (the gates' directory), STEPS_COMMAND (a command whose run
// has held steps), SLOW_COMMAND
// (a command whose run outlives the test), CHROMIUM (default
// /usr/bin/chromium).
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const stepsCommand = process.env.STEPS_COMMAND;
const slowCommand = process.env.SLOW_COMMAND;

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 1200, height: 1400 } });
  const page = await context.newPage();
  try {
    const result = {};
    page.on('console', (m) => console.log('CONSOLE ' + m.type() + ' ' + m.text()));
    page.on('pageerror', (e) => console.log('PAGEERROR ' + String(e)));
    await page.goto(process.env.LOGIN_URL);
    await page.waitForFunction(() => document.getElementById('live').textContent === 'live', null, { timeout: 15000 });
    result.rules = await page.$$eval('#rules li', (lis) => lis.map((li) => li.textContent));

    // The rules test answers as the person types, as `hubgate rules test`.
    await page.fill('#rules-test-text', stepsCommand);
    await page.waitForFunction(() => /^command /.test(document.getElementById('rules-test-result').textContent), null, { timeout: 10000 });
    result.rulesTest = await page.textContent('#rules-test-result');

    // "Try a command" starts the multi-step run; its steps appear live.
    await page.fill('#try-text', stepsCommand);
    await page.click('#try-run');
    await page.waitForFunction(() => /^command #\d+ sent/.test(document.getElementById('try-result').textContent), null, { timeout: 10000 });
    result.tryResult = await page.textContent('#try-result');
    const stepRunning = (n) => page.waitForFunction((n) => {
      const li = document.querySelector('#current-steps li[data-index="' + n + '"]');
      return li && li.dataset.status === 'running';
    }, n, { timeout: 20000 });
    await stepRunning(2);
    result.stepsWhileRunning1 = await page.$$eval('#current-steps li', (lis) => lis.map((li) => li.dataset.index + ':' + li.dataset.status + ':' + li.textContent));
    fs.writeFileSync(path.join(process.env.GATES, 'gate1'), '');
    await stepRunning(3);
    result.stepsWhileRunning2 = await page.$$eval('#current-steps li', (lis) => lis.map((li) => li.dataset.index + ':' + li.dataset.status + ':' + li.textContent));
    result.currentWhileRunning = await page.textContent('#current');
    await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
    fs.writeFileSync(path.join(process.env.GATES, 'gate2'), '');
    await page.waitForFunction(() => document.querySelector('#recent .run') !== null, null, { timeout: 20000 });
    result.recent = await page.textContent('#recent');

    // A run that outlives the test: cancel, the grace counts down, force.
    await page.fill('#try-text', slowCommand);
    await page.click('#try-run');
    await page.waitForFunction((cmd) => {
      const c = document.querySelector('#current .command');
      return c && c.textContent === cmd;
    }, slowCommand, { timeout: 20000 });
    await page.click('#cancel');
    await page.waitForFunction(() => /forces it in \d+ s/.test(document.getElementById('cancel-state').textContent), null, { timeout: 10000 });
    const first = await page.textContent('#cancel-state');
    await page.waitForFunction((first) => {
      const t = document.getElementById('cancel-state').textContent;
      return /forces it in \d+ s/.test(t) && t !== first;
    }, first, { timeout: 10000 });
    result.countdown = [first, await page.textContent('#cancel-state')];
    result.forceVisible = await page.isVisible('#force');
    await page.click('#force');
    await page.waitForFunction((cmd) => [...document.querySelectorAll('#history tr')].some((tr) =>
      tr.children[2].textContent === cmd && /^canceled/.test(tr.children[4].textContent)), slowCommand, { timeout: 20000 });
    result.forceResult = await page.textContent('#cancel-result');
    // The page follows the daemon's events: the current-run card clears at
    // the event that frees the slot, which may come just after the row.
    await page.waitForFunction(() => /Nothing runs/.test(document.getElementById('current').textContent), null, { timeout: 10000 })
      .catch(() => {});
    result.currentAfterForce = await page.textContent('#current');
    result.history = await page.$$eval('#history tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    result.events = await page.$$eval('#events li', (lis) => lis.map((li) => li.textContent));
    console.log('RESULT ' + JSON.stringify(result));
  } catch (err) {
    console.log('PAGE ' + (await page.evaluate(() => document.body.innerText)).replace(/\n/g, ' | '));
    throw err;
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  console.log('FAIL ' + String(err && err.stack || err).replace(/\n/g, ' | '));
  process.exit(1);
});

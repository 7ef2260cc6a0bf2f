// swagger-e2e.cjs: drives the mock's API explorer (/swagger, Swagger UI)
// in headless Chromium with playwright-core (Debian's chromium; no
// browser download), for cmd/hubgate's Go test. Prints one line
// "RESULT <json>" and exits 0, or "FAIL <message>" and exits 1.
//
// Environment: MOCK_URL (the mock's base URL), ACCESS_TOKEN (from
// `hubgate mock token`), SCREENSHOT (a .png path), CHROMIUM (default
// /usr/bin/chromium).
'use strict';
const { chromium } = require('playwright-core');

const base = process.env.MOCK_URL;
const accessToken = process.env.ACCESS_TOKEN;
const shot = process.env.SCREENSHOT;
const createOp = '#operations-Device-CreateUserDevice';

// createDevice runs "Create a User Device" with Try it out and returns
// the status and body the UI shows, and whether the request carried want
// as its bearer (want null: any bearer).
async function createDevice(page, name, want) {
  let bearer = null;
  const onRequest = (req) => {
    if (req.url().includes('/api/Device/userDevices/new/')) {
      bearer = req.headers()['authorization'] || '';
    }
  };
  page.on('request', onRequest);
  const op = page.locator(createOp);
  if (!(await op.locator('.btn.execute').isVisible())) {
    await op.locator('.opblock-summary').first().click();
  }
  // A response of an earlier run stays until cleared: clear it, so that
  // the status read below is this run's.
  const clear = op.locator('.btn-clear');
  if (await clear.isVisible()) {
    await clear.click();
    await op.locator('.live-responses-table').waitFor({ state: 'detached', timeout: 5000 });
  }
  const nameInput = op.locator('tr[data-param-name="name"] input');
  await nameInput.fill(name);
  await op.locator('.btn.execute').click();
  const status = op.locator('.live-responses-table tr.response .response-col_status').first();
  await status.waitFor({ timeout: 15000 });
  const body = await op.locator('.live-responses-table tr.response .response-col_description pre').first().textContent();
  page.off('request', onRequest);
  return {
    status: (await status.textContent()).trim(),
    body: JSON.parse(body),
    bearerSent: bearer !== null && bearer.startsWith('Bearer ') && (want === null || bearer === 'Bearer ' + want),
  };
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const result = { console: [], pageErrors: [] };
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') result.console.push(m.type() + ' ' + m.text()); });
    page.on('pageerror', (e) => result.pageErrors.push(String(e)));
    // The explorer loads offline: every request stays on the mock.
    const foreign = [];
    page.on('request', (req) => { if (!req.url().startsWith(base) && !req.url().startsWith('data:')) foreign.push(req.url()); });

    const resp = await page.goto(base + '/swagger');
    result.pageStatus = resp.status();
    await page.waitForSelector('.opblock', { timeout: 20000 });
    result.title = await page.locator('.info .title').first().textContent();
    result.operations = await page.$$eval('.opblock', (els) => els.map((el) =>
      el.querySelector('.opblock-summary-method').textContent.trim() + ' ' +
      el.querySelector('[data-path]').getAttribute('data-path')));
    result.tags = await page.$$eval('.opblock-tag[data-tag]', (els) => els.map((el) => el.getAttribute('data-tag')));

    // Without authorization: 401.
    result.unauthorized = await createDevice(page, 'no token', null).then((r) => ({ status: r.status, bearerSent: r.bearerSent }));

    // Authorize with the token from `hubgate mock token`.
    await page.click('.auth-wrapper .btn.authorize');
    const modal = page.locator('.modal-ux');
    await modal.locator('input').first().fill(accessToken);
    await modal.locator('.auth-btn-wrapper .btn.authorize').click();
    result.authorized = await page.evaluate(() => Object.keys(window.ui.authSelectors.authorized().toJS()));
    await modal.locator('.btn-done').click();

    result.created = await createDevice(page, 'Explorer device', accessToken);
    await page.locator(createOp).scrollIntoViewIfNeeded();
    await page.screenshot({ path: shot });

    // The Sign in button: the OAuth flow in the browser, then the token
    // is in Authorize.
    const fresh = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
    fresh.on('pageerror', (e) => result.pageErrors.push(String(e)));
    await fresh.goto(base + '/swagger/');
    await fresh.waitForSelector('.opblock', { timeout: 20000 });
    await fresh.click('#mock-signin-button');
    await fresh.waitForFunction(() => /^Signed in:/.test(document.getElementById('mock-signin-status').textContent), null, { timeout: 20000 });
    result.signInStatus = await fresh.textContent('#mock-signin-status');
    result.addressAfterSignIn = fresh.url();
    result.signedInSchemes = await fresh.evaluate(() => Object.keys(window.ui.authSelectors.authorized().toJS()));
    result.createdAfterSignIn = await createDevice(fresh, 'Signed-in device', null);
    result.foreignRequests = foreign;
    console.log('RESULT ' + JSON.stringify(result));
  } catch (err) {
    for (const p of browser.contexts().flatMap((c) => c.pages())) {
      console.log('PAGE ' + (await p.evaluate(() => document.body.innerText)).slice(0, 2000).replace(/\n/g, ' | '));
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

// The interactive tools on a session's page (browser_navigate, browser_act,
// browser_wait, browser_snapshot, browser_screenshot, browser_upload,
// browser_download, browser_network) (issue 32, acceptance 2) driven by the
// TypeScript SDK client over Streamable HTTP and stdio: search a small shop,
// open a product, choose a quantity, add it to the cart (the shop's own cart
// must hold it); then, on the Go fixture shop (fixtured): upload a file from
// the directory the daemon allows (--allow-upload-dir) and the shop echoes
// its SHA-256, download the invoice and read the artifact's bytes back over
// resources/read, upload that artifact, and sign in while capturing the
// network: the HAR artifact lists the POST with the password masked, and
// the password appears nowhere else in it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { connectHTTP, connectStdio, scratchDir, startServe } from '../lib/daemon.js';
import { LOGIN_PASSWORD, LOGIN_USER, startGoFixture } from '../lib/gofixture.js';

const PRODUCTS = ['Blue mug', 'Red mug', 'Green teapot'];

// startShop serves the shop on loopback; carts() lists what was added.
async function startShop() {
  const added = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://shop');
    const page = (title, body) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>${title}</title><header><nav><a href="/">Shop</a> <a href="/cart">Cart</a></nav></header><main>${body}</main>`);
    };
    if (u.pathname === '/') {
      page('Shop', '<h1>Shop</h1><form action="/search" role="search"><input name=q aria-label="Search products"><button>Search</button></form>');
    } else if (u.pathname === '/search') {
      const q = (u.searchParams.get('q') ?? '').toLowerCase();
      const items = PRODUCTS.map((p, i) => p.toLowerCase().includes(q) ? `<li><a href="/product/${i}">${p}</a></li>` : '').join('');
      page('Results', `<h1>Results</h1><ul>${items}</ul>`);
    } else if (u.pathname.startsWith('/product/')) {
      const p = PRODUCTS[Number(u.pathname.slice(9))];
      page(p, `<h1>${p}</h1><form method=post action="/cart"><input type=hidden name=p value="${p}">` +
        '<label>Quantity <select name=qty><option>1<option>2<option>3</select></label><button>Add to cart</button></form>');
    } else if (u.pathname === '/cart' && req.method === 'POST') {
      let body = '';
      req.on('data', c => { body += c; });
      req.on('end', () => {
        const f = new URLSearchParams(body);
        added.push(`${f.get('p')} × ${f.get('qty')}`);
        res.writeHead(303, { location: '/cart' });
        res.end();
      });
    } else if (u.pathname === '/cart') {
      page('Cart', '<h1>Cart</h1>' + added.map(a => `<p>${a}</p>`).join(''));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (p) => `http://127.0.0.1:${server.address().port}${p}`,
    added: () => [...added],
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(resolve); }),
  };
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  const text = (res.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('');
  return { res, text };
}

function refOf(snap, role, name) {
  const m = new RegExp(`^\\s*(?:\\+ +)?(e\\d+) ${role} "${name}"`, 'm').exec(snap);
  assert.ok(m, `no ${role} "${name}" in:\n${snap}`);
  return m[1];
}

// waitFor answers the page's snapshot once it shows want (browser_wait: a
// navigation an action started may end after the action's answer).
async function waitFor(client, sessionId, want) {
  const { res, text } = await call(client, 'browser_wait', { sessionId, text: want, timeoutMs: 60000 });
  assert.ok(!res.isError, JSON.stringify(res.structuredContent));
  return text;
}

async function journey(client, shop) {
  const { res: created } = await call(client, 'create_browser_session', {});
  assert.ok(!created.isError, JSON.stringify(created));
  const sessionId = created.structuredContent.sessionId;
  const nav = await call(client, 'browser_navigate', { sessionId, url: shop.url('/') });
  assert.equal(nav.res.structuredContent.status, 200);
  const box = refOf(nav.text, 'textbox', 'Search products');
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: box, action: 'fill', value: 'mug' })).res.isError);
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: box, action: 'press', value: 'Enter' })).res.isError);
  let snap = await waitFor(client, sessionId, 'Results');
  assert.match(snap, /link "Red mug"/);
  assert.doesNotMatch(snap, /teapot/);
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(snap, 'link', 'Blue mug'), action: 'click' })).res.isError);
  snap = await waitFor(client, sessionId, 'Quantity');
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(snap, 'combobox', 'Quantity'), action: 'select', value: '2' })).res.isError);
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(snap, 'button', 'Add to cart'), action: 'click' })).res.isError);
  await waitFor(client, sessionId, 'Blue mug × 2');
  const shot = await call(client, 'browser_screenshot', { sessionId });
  assert.equal(shot.res.content[0].type, 'image');
  assert.equal(shot.res.content[0].mimeType, 'image/png');
  const bad = await call(client, 'browser_act', { sessionId, ref: 'e999', action: 'click' });
  assert.equal(bad.res.isError, true);
  assert.equal(bad.res.structuredContent.errorCode, 'INVALID_PARAMETER');
}

// The invoice the Go fixture shop serves (fixture.ShopInvoice): text, then
// every byte value, so a download kept as text would not compare equal.
const INVOICE = Buffer.concat([
  Buffer.from('%PDF-1.4\n% invoice 1042: Blue mug x 2, 24.00 EUR\n'),
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
  Buffer.from('\n%%EOF\n'),
]);

const sha256 = (b) => createHash('sha256').update(b).digest('hex');

// artifactBytes reads the artifact a tool answered with (its resource_link)
// through resources/read.
async function artifactBytes(client, res) {
  const link = res.content.find(c => c.type === 'resource_link');
  assert.ok(link, JSON.stringify(res.content));
  assert.equal(link.uri, `browsertask://artifacts/${res.structuredContent.artifactId}`);
  const read = await client.readResource({ uri: link.uri });
  const c = read.contents[0];
  return c.blob !== undefined ? Buffer.from(c.blob, 'base64') : Buffer.from(c.text, 'utf8');
}

// uploadReceipt sets the receipt form's file (args: path or artifactId),
// sends it and returns what the shop echoed.
async function uploadReceipt(client, sessionId, site, args, want) {
  const nav = await call(client, 'browser_navigate', { sessionId, url: site.url('/shop/upload') });
  const up = await call(client, 'browser_upload', { sessionId, ref: refOf(nav.text, 'button', 'Receipt'), ...args });
  assert.ok(!up.res.isError, JSON.stringify(up.res.structuredContent));
  assert.equal(up.res.structuredContent.sha256, sha256(want));
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(nav.text, 'button', 'Send receipt'), action: 'click' })).res.isError);
  const snap = await waitFor(client, sessionId, 'Receipt received');
  assert.match(snap, new RegExp(sha256(want)));
  assert.match(snap, new RegExp(`Size ${want.length} bytes`));
}

// files uploads, downloads and captures on the Go fixture shop.
async function files(client, site, dir) {
  const { res: created } = await call(client, 'create_browser_session', {});
  const sessionId = created.structuredContent.sessionId;

  const receipt = Buffer.from('receipt 1042: 24.00 EUR paid\n');
  writeFileSync(path.join(dir, 'receipt.txt'), receipt);
  await uploadReceipt(client, sessionId, site, { path: path.join(dir, 'receipt.txt') }, receipt);
  const form = await call(client, 'browser_navigate', { sessionId, url: site.url('/shop/upload') });
  const outside = await call(client, 'browser_upload', { sessionId, ref: refOf(form.text, 'button', 'Receipt'), path: '/etc/hostname' });
  assert.equal(outside.res.isError, true);
  assert.equal(outside.res.structuredContent.errorCode, 'INVALID_PARAMETER');
  assert.equal(outside.res.structuredContent.details.field, 'path');
  assert.equal(outside.res.structuredContent.details.flag, '--allow-upload-dir');

  const inv = await call(client, 'browser_navigate', { sessionId, url: site.url('/shop/invoice') });
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(inv.text, 'link', 'Download invoice'), action: 'click' })).res.isError);
  const dl = await call(client, 'browser_download', { sessionId, timeoutMs: 60000 });
  assert.ok(!dl.res.isError, JSON.stringify(dl.res.structuredContent));
  assert.equal(dl.res.structuredContent.name, 'invoice-1042.pdf');
  assert.equal(dl.res.structuredContent.mimeType, 'application/pdf');
  assert.deepEqual(await artifactBytes(client, dl.res), INVOICE);
  await uploadReceipt(client, sessionId, site, { artifactId: dl.res.structuredContent.artifactId }, INVOICE);

  assert.ok(!(await call(client, 'browser_network', { sessionId, action: 'start', bodies: true })).res.isError);
  const login = await call(client, 'browser_navigate', { sessionId, url: site.url('/login') });
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(login.text, 'textbox', 'Email or username'), action: 'fill', value: LOGIN_USER })).res.isError);
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(login.text, 'textbox', 'Password'), action: 'fill', value: LOGIN_PASSWORD })).res.isError);
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(login.text, 'button', 'Sign in'), action: 'click' })).res.isError);
  await waitFor(client, sessionId, 'Welcome alice');
  const stop = await call(client, 'browser_network', { sessionId, action: 'stop' });
  assert.ok(!stop.res.isError, JSON.stringify(stop.res.structuredContent));
  const raw = (await artifactBytes(client, stop.res)).toString('utf8');
  for (const form of [LOGIN_PASSWORD, encodeURIComponent(LOGIN_PASSWORD), JSON.stringify(LOGIN_PASSWORD).slice(1, -1)]) {
    assert.ok(!raw.includes(form), `the HAR holds ${form}`);
  }
  const har = JSON.parse(raw);
  assert.equal(har.log.version, '1.2');
  const posts = har.log.entries.filter(e => e.request.method === 'POST' && new URL(e.request.url).pathname === '/login');
  assert.equal(posts.length, 1);
  assert.equal(posts[0].response.status, 303);
  assert.equal(posts[0].request.postData.text, `f1=${LOGIN_USER}&f2=***`);
  const members = har.log.entries.find(e => new URL(e.request.url).pathname === '/members');
  assert.equal(members.response.status, 200);
  assert.equal(members.request.headers.find(h => h.name.toLowerCase() === 'cookie')?.value, '***');
}

describe('interactive tools on a session (TypeScript SDK)', () => {
  let shop;
  let site;
  let daemon;
  const uploads = scratchDir('browsertask-e2e-uploads-');
  before(async () => { shop = await startShop(); site = await startGoFixture(); });
  after(async () => { await daemon?.stop(); await shop?.close(); await site?.close(); });

  test('over Streamable HTTP: search, open a product, add to cart, upload, download, HAR', async () => {
    daemon = await startServe({ db: path.join(scratchDir(), 'browsertask.db'), flags: ['--allow-upload-dir', uploads] });
    const client = await connectHTTP(daemon.url);
    try {
      await journey(client, shop);
      await files(client, site, uploads);
    } finally {
      await client.close();
    }
    assert.deepEqual(shop.added(), ['Blue mug × 2']);
  });

  test('over stdio: search, open a product, add to cart, upload, download, HAR', async () => {
    const client = await connectStdio({ db: path.join(scratchDir(), 'browsertask.db'), flags: ['--allow-upload-dir', uploads] });
    try {
      await journey(client, shop);
      await files(client, site, uploads);
    } finally {
      await client.close();
    }
    assert.deepEqual(shop.added(), ['Blue mug × 2', 'Blue mug × 2']);
  });
});
